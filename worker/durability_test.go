package worker

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDurabilityValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d     Durability
		field string // "" = valid
		says  string
	}{
		{Durability{}, "", ""},
		{Durability{Replicas: 1, Timeout: 250 * time.Millisecond}, "", ""},
		{Durability{Replicas: 16, Timeout: time.Minute}, "", ""},
		{Durability{AOF: true, Timeout: time.Millisecond}, "", ""},
		{Durability{Replicas: -1, Timeout: time.Second}, "Durability.Replicas", "must be 0 to 16 (got -1)"},
		{Durability{Replicas: 17, Timeout: time.Second}, "Durability.Replicas", "must be 0 to 16 (got 17)"},
		{Durability{Replicas: 1}, "Durability.Timeout", "is required to wait for replicas"},
		{Durability{AOF: true}, "Durability.Timeout", "is required to wait for replicas"},
		{Durability{Timeout: time.Second}, "Durability.Timeout", "nothing waits"},
		{Durability{Replicas: 1, Timeout: -time.Second}, "Durability.Timeout", "must not be negative"},
		{Durability{Replicas: 1, Timeout: time.Microsecond}, "Durability.Timeout", "at least 1ms"},
		{Durability{Replicas: 1, Timeout: 2 * time.Minute}, "Durability.Timeout", "at most 1m0s (got 2m0s)"},
	}
	for _, tt := range tests {
		err := tt.d.validate("Durability")
		var ve *ValidationError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tt.d, err)
		case tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(ve.Reason, tt.says)):
			t.Errorf("%+v: %v; want %s: …%s…", tt.d, err, tt.field, tt.says)
		}
	}
}

func TestValidateDurabilities(t *testing.T) {
	t.Parallel()
	err := validateDurabilities(map[string]Durability{
		"emails": {Replicas: 1, Timeout: time.Second},
		"sms":    {Replicas: 1},
		"a{b}":   {Replicas: 1, Timeout: time.Second},
	})
	for _, want := range []string{`invalid Durability["sms"].Timeout: is required`, `invalid Durability["a{b}"]: is not a valid queue name`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validateDurabilities: %v; want it to say %s", err, want)
		}
	}
	if err := validateDurabilities(nil); err != nil {
		t.Errorf("no durabilities: %v", err)
	}
}

func TestNotReplicatedError(t *testing.T) {
	t.Parallel()
	cause := errors.New("connection reset")
	tests := []struct {
		err  *NotReplicatedError
		want string
	}{
		{&NotReplicatedError{Queue: "q", Want: 1, Got: 0, Timeout: 100 * time.Millisecond},
			`queue "q": enqueue stored on the master but confirmed on 0 of 1 replicas within 100ms; the job may not survive a failover`},
		{&NotReplicatedError{Queue: "q", Want: 2, Got: 1, AOF: true, Local: true, Timeout: time.Second},
			`queue "q": enqueue stored on the master but written to the append-only file of 1 of 2 replicas (and the master's) within 1s; the job may not survive a failover`},
		{&NotReplicatedError{Queue: "q", Want: 1, Timeout: time.Second, Err: cause},
			`queue "q": enqueue stored on the master but not confirmed on replicas: connection reset; the job may not survive a failover`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q\nwant        %q", got, tt.want)
		}
		if !errors.Is(tt.err, ErrNotReplicated) {
			t.Errorf("%v does not match ErrNotReplicated", tt.err)
		}
	}
	if !errors.Is(tests[2].err, cause) {
		t.Error("the cause is not unwrapped")
	}
}

package worker

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// requireInvalidField fails t unless err is a *ValidationError for field
// that also matches ErrInvalid and whose text contains every string in want.
func requireInvalidField(t *testing.T, err error, field string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil; want an invalid %s error", field)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false; want true", err)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T); want a *ValidationError", err, err)
	}
	if ve.Field != field {
		t.Errorf("Field = %q; want %q (err: %v)", ve.Field, field, err)
	}
	if ve.Reason == "" {
		t.Errorf("Reason is empty (err: %v)", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %q; want it to mention %q", err, w)
		}
	}
}

func TestValidateQueueNameValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		queue string
	}{
		{"one letter", "a"},
		{"upper case", "EMAILS"},
		{"digits", "0123456789"},
		{"all allowed characters", "AZaz09._-"},
		{"dotted", "billing.invoices.v2"},
		{"only punctuation", "-._"},
		{"128 characters", strings.Repeat("q", MaxQueueNameLen)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := ValidateQueueName(tt.queue); err != nil {
				t.Fatalf("ValidateQueueName(%q) = %v; want nil", tt.queue, err)
			}
		})
	}
}

func TestValidateQueueNameInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		queue string
		want  []string // substrings of the error
	}{
		{"empty", "", []string{"empty"}},
		{"129 characters", strings.Repeat("q", MaxQueueNameLen+1), []string{"129", "128"}},
		{"open brace", "a{", []string{"'{'", "byte 1"}},
		{"close brace", "}", []string{"'}'", "byte 0"}},
		{"hash tag", "a{b}", []string{"'{'", "byte 1"}},
		{"colon", "app:emails", []string{"':'", "byte 3"}},
		{"space", "my queue", []string{"' '", "byte 2"}},
		{"tab", "a\tb", []string{`'\t'`, "byte 1"}},
		{"newline", "a\n", []string{`'\n'`, "byte 1"}},
		{"NUL", "a\x00b", []string{`'\x00'`, "byte 1"}},
		{"non-ASCII", "é", []string{"byte 0"}},
		{"slash", "a/b", []string{"'/'"}},
		{"star", "*", []string{"'*'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateQueueName(tt.queue)
			requireInvalidField(t, err, "Queue", tt.want...)
			if !strings.HasPrefix(err.Error(), "invalid Queue: ") {
				t.Errorf("err = %q; want it to start with %q", err, "invalid Queue: ")
			}
		})
	}
}

// TestValidateQueueNameNonASCIIMessage: the error for a non-ASCII queue name
// quotes the character at the offending byte ('é'), not that byte read as a
// character of its own ('Ã' for the first byte of "é").
func TestValidateQueueNameNonASCIIMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		queue  string
		want   string
		reject string
	}{
		{"e acute", "é", "'é'", "'Ã'"},
		{"after ASCII", "café", "'é'", "'Ã'"},
		{"CJK", "订单", "'订'", "'è'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateQueueName(tt.queue)
			requireInvalidField(t, err, "Queue", tt.want)
			if strings.Contains(err.Error(), tt.reject) {
				t.Errorf("err = %q; names %s, which is not in the name", err, tt.reject)
			}
		})
	}
}

func TestValidateIDValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   string
	}{
		{"one byte", "x"},
		{"256 bytes", strings.Repeat("i", MaxIDLen)},
		{"256 bytes of multibyte runes", strings.Repeat("é", MaxIDLen/2)},
		{"unicode letters", "订单-42"},
		{"punctuation", "order:42/{eu}#1?a=b&c=[d]"},
		{"colon and braces", ":{}"},
		{"emoji (symbol, printable)", "📦-1"},
		{"ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"replacement character encoded", "\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := ValidateID(tt.id); err != nil {
				t.Fatalf("ValidateID(%q) = %v; want nil", tt.id, err)
			}
		})
	}
}

func TestValidateIDInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		id   string
		want []string
	}{
		{"empty", "", []string{"empty"}},
		{"257 bytes", strings.Repeat("i", MaxIDLen+1), []string{"257", "256"}},
		{"257 bytes ending in a multibyte rune", strings.Repeat("i", MaxIDLen-1) + "é", []string{"257"}},
		{"space", "a b", []string{"' '", "byte 1"}},
		{"leading space", " a", []string{"byte 0"}},
		{"tab", "a\tb", []string{`'\t'`}},
		{"newline", "a\n", []string{`'\n'`}},
		{"carriage return", "a\rb", []string{`'\r'`}},
		{"NUL", "a\x00", []string{`'\x00'`}},
		{"control 0x01", "a\x01b", []string{`'\x01'`}},
		{"DEL", "a\x7f", []string{`'\x7f'`}},
		{"C1 control", "a\u0085", []string{"byte 1"}},
		{"invalid UTF-8", "\xff", []string{"UTF-8"}},
		{"truncated UTF-8", "ab\xc3", []string{"UTF-8"}},
		// U+00A0 is a space separator (Zs): IsSpace is true, IsPrint false.
		{"non-breaking space", "a\u00a0b", []string{"byte 1"}},
		// U+3000 is a space separator (Zs).
		{"ideographic space", "订\u3000单", []string{"byte 3"}},
		// U+200B and U+FEFF are format characters (Cf): IsPrint is false.
		{"zero-width space", "a\u200bb", []string{"byte 1"}},
		{"byte order mark", "\ufeffa", []string{"byte 0"}},
		// U+2028 is a line separator (Zl).
		{"line separator", "a\u2028", []string{"byte 1"}},
		// U+E000 is private use (Co): IsPrint is false.
		{"private use", "\ue000", []string{"byte 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateID(tt.id)
			requireInvalidField(t, err, "ID", tt.want...)
			if !strings.HasPrefix(err.Error(), "invalid ID: ") {
				t.Errorf("err = %q; want it to start with %q", err, "invalid ID: ")
			}
		})
	}
}

func TestValidatePrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prefix  string
		wantErr bool
	}{
		{"default", "courier", false},
		{"namespaced", "app:courier", false},
		{"all allowed", "Az09._-:", false},
		{"128 characters", strings.Repeat("p", MaxQueueNameLen), false},
		{"empty", "", true},
		{"129 characters", strings.Repeat("p", MaxQueueNameLen+1), true},
		{"hash tag", "{x}", true},
		{"space", "a b", true},
		{"newline", "a\n", true},
		{"non-ASCII", "kö", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validatePrefix(tt.prefix)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("validatePrefix(%q) = %v; want nil", tt.prefix, err)
				}
				return
			}
			requireInvalidField(t, err, "Prefix")
		})
	}
}

func TestValidationErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *ValidationError
		want string
	}{
		{"simple", &ValidationError{Field: "Queue", Reason: "name is empty"}, "invalid Queue: name is empty"},
		{"indexed field", &ValidationError{Field: "specs[3].Delay", Reason: "must not be negative"}, "invalid specs[3].Delay: must not be negative"},
		{"built by invalid", invalid("Payload", "is %d bytes", 9).(*ValidationError), "invalid Payload: is 9 bytes"}, //nolint:errorlint // invalid returns this type
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.err.Error(); got != tt.want {
				t.Fatalf("Error() = %q; want %q", got, tt.want)
			}
			if !errors.Is(tt.err, ErrInvalid) {
				t.Fatal("errors.Is(err, ErrInvalid) = false; want true")
			}
			if errors.Is(tt.err, ErrDuplicate) {
				t.Fatal("errors.Is(err, ErrDuplicate) = true; want false")
			}
			if !errors.Is(fmt.Errorf("jobs[1]: %w", tt.err), ErrInvalid) {
				t.Fatal("errors.Is(wrapped, ErrInvalid) = false; want true")
			}
		})
	}
}

func FuzzValidateID(f *testing.F) {
	for _, s := range []string{
		"", "x", "订单-42", ":{}", "a b", "a\tb", "\xff", "a\u00a0b", "a\u200bb",
		strings.Repeat("i", MaxIDLen), strings.Repeat("i", MaxIDLen+1), "\x00", "\uFFFD",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := ValidateID(id)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != "ID" || !errors.Is(err, ErrInvalid) {
				t.Fatalf("ValidateID(%q) = %v (%T); want a *ValidationError for id", id, err, err)
			}
			return
		}
		if id == "" || len(id) > MaxIDLen {
			t.Fatalf("ValidateID accepted %q of %d bytes; want 1 to %d", id, len(id), MaxIDLen)
		}
		if !utf8.ValidString(id) {
			t.Fatalf("ValidateID accepted invalid UTF-8 %q", id)
		}
		for i, r := range id {
			if unicode.IsSpace(r) || unicode.IsControl(r) || !unicode.IsPrint(r) {
				t.Fatalf("ValidateID accepted %q with %U at byte %d", id, r, i)
			}
		}
	})
}

// newJobTestNow is the producer's clock in the newJob tests.
var newJobTestNow = time.UnixMilli(1_700_000_000_000)

func TestClientNewJobInvalid(t *testing.T) {
	t.Parallel()
	horizon := MaxScheduleAheadDefault
	tests := []struct {
		name      string
		cfg       Config
		spec      JobSpec
		wantField string
		wantInErr []string
	}{
		{"payload over the default limit", Config{}, JobSpec{Queue: "q", Payload: make([]byte, MaxPayloadBytesDefault+1)}, "Payload", []string{"1048577", "1048576"}},
		{"payload over a set limit", Config{MaxPayloadBytes: 10}, JobSpec{Queue: "q", Payload: make([]byte, 11)}, "Payload", []string{"11", "10"}},
		{"negative delay", Config{}, JobSpec{Queue: "q", Delay: -time.Second}, "Delay", []string{"negative", "-1s"}},
		{"delay beyond the horizon", Config{}, JobSpec{Queue: "q", Delay: horizon + time.Nanosecond}, "Delay", []string{"horizon"}},
		{"delay beyond a set horizon", Config{MaxScheduleAhead: time.Hour}, JobSpec{Queue: "q", Delay: 2 * time.Hour}, "Delay", []string{"2h0m0s", "1h0m0s"}},
		{"run_at and delay", Config{}, JobSpec{Queue: "q", Delay: time.Second, RunAt: newJobTestNow.Add(time.Minute)}, "RunAt", []string{"not both"}},
		{"run_at in the past and delay", Config{}, JobSpec{Queue: "q", Delay: time.Second, RunAt: newJobTestNow.Add(-time.Minute)}, "RunAt", []string{"not both"}},
		{"run_at beyond the horizon", Config{}, JobSpec{Queue: "q", RunAt: newJobTestNow.Add(horizon + time.Millisecond)}, "RunAt", []string{"horizon"}},
		{"run_at beyond a set horizon", Config{MaxScheduleAhead: time.Minute}, JobSpec{Queue: "q", RunAt: newJobTestNow.Add(time.Hour)}, "RunAt", []string{"horizon"}},
		{"run_at before 1970", Config{}, JobSpec{Queue: "q", RunAt: time.UnixMilli(-1)}, "RunAt", []string{"1970"}},
		{"negative max attempts", Config{}, JobSpec{Queue: "q", MaxAttempts: -1}, "MaxAttempts", []string{"-1"}},
		{"max attempts over the limit", Config{}, JobSpec{Queue: "q", MaxAttempts: MaxAttemptsLimit + 1}, "MaxAttempts", []string{"1 to 1000", "1001"}},
		{"timeout over the limit", Config{}, JobSpec{Queue: "q", Timeout: TimeoutLimit + time.Millisecond}, "Timeout", []string{"168h0m0s", "168h0m0.001s"}},
		{"negative timeout", Config{}, JobSpec{Queue: "q", Timeout: -time.Millisecond}, "Timeout", []string{"-1ms"}},
		{"timeout below 1ms", Config{}, JobSpec{Queue: "q", Timeout: 500 * time.Microsecond}, "Timeout", []string{"1ms", "500µs"}},
		{"timeout 1ns", Config{}, JobSpec{Queue: "q", Timeout: 1}, "Timeout", []string{"1ms"}},
		{"empty queue", Config{}, JobSpec{}, "Queue", []string{"empty"}},
		{"queue with hash tag", Config{}, JobSpec{Queue: "a{b}"}, "Queue", []string{"'{'"}},
		{"id with space", Config{}, JobSpec{Queue: "q", ID: "order 1"}, "ID", []string{"' '"}},
		{"id too long", Config{}, JobSpec{Queue: "q", ID: strings.Repeat("i", MaxIDLen+1)}, "ID", []string{"257"}},
		{"id not UTF-8", Config{}, JobSpec{Queue: "q", ID: "\xff"}, "ID", []string{"UTF-8"}},
		// The queue is checked first, then the id, then the rest.
		{"bad queue and bad id", Config{}, JobSpec{Queue: "", ID: " "}, "Queue", nil},
		{"bad id and bad payload", Config{MaxPayloadBytes: 1}, JobSpec{Queue: "q", ID: " ", Payload: []byte("xx")}, "ID", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Client{cfg: tt.cfg.withDefaults()}
			_, err := c.newJob(&tt.spec, newJobTestNow)
			requireInvalidField(t, err, tt.wantField, tt.wantInErr...)
			if !strings.HasPrefix(err.Error(), "invalid "+tt.wantField+": ") {
				t.Errorf("err = %q; want it to start with %q", err, "invalid "+tt.wantField+": ")
			}
		})
	}
}

func TestClientNewJobValid(t *testing.T) {
	t.Parallel()
	horizon := MaxScheduleAheadDefault
	tests := []struct {
		name string
		cfg  Config
		spec JobSpec
	}{
		{"minimal", Config{}, JobSpec{Queue: "q"}},
		{"empty payload", Config{}, JobSpec{Queue: "q", Payload: []byte{}}},
		{"payload at the default limit", Config{}, JobSpec{Queue: "q", Payload: make([]byte, MaxPayloadBytesDefault)}},
		{"payload at a set limit", Config{MaxPayloadBytes: 10}, JobSpec{Queue: "q", Payload: make([]byte, 10)}},
		{"own id", Config{}, JobSpec{Queue: "q", ID: "订单:{42}"}},
		{"delay", Config{}, JobSpec{Queue: "q", Delay: time.Minute}},
		{"delay at the horizon", Config{}, JobSpec{Queue: "q", Delay: horizon}},
		{"run_at in the future", Config{}, JobSpec{Queue: "q", RunAt: newJobTestNow.Add(time.Hour)}},
		{"run_at at the horizon", Config{}, JobSpec{Queue: "q", RunAt: newJobTestNow.Add(horizon)}},
		{"run_at in the past", Config{}, JobSpec{Queue: "q", RunAt: newJobTestNow.Add(-24 * time.Hour)}},
		{"run_at at the epoch", Config{}, JobSpec{Queue: "q", RunAt: time.UnixMilli(0)}},
		{"max attempts 1", Config{}, JobSpec{Queue: "q", MaxAttempts: 1}},
		{"timeout 1ms", Config{}, JobSpec{Queue: "q", Timeout: time.Millisecond}},
		{"max attempts at the limit", Config{}, JobSpec{Queue: "q", MaxAttempts: MaxAttemptsLimit}},
		{"timeout at the limit", Config{}, JobSpec{Queue: "q", Timeout: TimeoutLimit}},
		{"everything", Config{}, JobSpec{Queue: "billing.v2", ID: "inv-1", Payload: []byte("{}"), RunAt: newJobTestNow.Add(time.Minute), MaxAttempts: 3, Timeout: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Client{cfg: tt.cfg.withDefaults()}
			got, err := c.newJob(&tt.spec, newJobTestNow)
			if err != nil {
				t.Fatalf("newJob = %v; want nil", err)
			}
			if tt.spec.ID != "" && got.ID != tt.spec.ID {
				t.Errorf("ID = %q; want the spec's %q", got.ID, tt.spec.ID)
			}
			if tt.spec.ID == "" {
				requireULIDShape(t, got.ID)
				if ms := decodeIDMillis(t, got.ID); !ms.Equal(newJobTestNow) {
					t.Errorf("generated id %q encodes %s; want %s", got.ID, ms, newJobTestNow)
				}
			}
			if !got.At.Equal(tt.spec.RunAt) || got.Delay != tt.spec.Delay || got.MaxAttempts != tt.spec.MaxAttempts ||
				got.Timeout != tt.spec.Timeout || !bytes.Equal(got.Payload, tt.spec.Payload) {
				t.Errorf("newJob = {At:%s Delay:%s MaxAttempts:%d Timeout:%s len(Payload):%d}; want the spec's {%s %s %d %s %d}",
					got.At, got.Delay, got.MaxAttempts, got.Timeout, len(got.Payload),
					tt.spec.RunAt, tt.spec.Delay, tt.spec.MaxAttempts, tt.spec.Timeout, len(tt.spec.Payload))
			}
		})
	}
}

func TestClientNewJobGeneratedIDsIncrease(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		now  func(i int) time.Time
	}{
		{"same time", func(int) time.Time { return newJobTestNow }},
		{"clock steps back", func(i int) time.Time { return newJobTestNow.Add(-time.Duration(i) * time.Millisecond) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Client{cfg: Config{}.withDefaults()}
			prev := ""
			for i := range 1000 {
				j, err := c.newJob(&JobSpec{Queue: "q"}, tt.now(i))
				if err != nil {
					t.Fatal(err)
				}
				if j.ID <= prev {
					t.Fatalf("job %d id %q; want greater than %q", i, j.ID, prev)
				}
				prev = j.ID
			}
		})
	}
}

func TestClientNewJobInvalidPriorityAndUnique(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		spec      JobSpec
		wantField string
		wantInErr []string
	}{
		{"priority above high", JobSpec{Queue: "q", Priority: Priority(5)}, "Priority", []string{"5", "PriorityHigh"}},
		{"priority below low", JobSpec{Queue: "q", Priority: Priority(-2)}, "Priority", []string{"-2"}},
		{"unique key with a space", JobSpec{Queue: "q", UniqueKey: "user 42"}, "UniqueKey", []string{"' '", "byte 4"}},
		{"unique key with a newline", JobSpec{Queue: "q", UniqueKey: "k\n"}, "UniqueKey", []string{`'\n'`}},
		{"unique key over 256 bytes", JobSpec{Queue: "q", UniqueKey: strings.Repeat("k", MaxIDLen+1)}, "UniqueKey", []string{"257", "256"}},
		{"unique key not UTF-8", JobSpec{Queue: "q", UniqueKey: "\xff"}, "UniqueKey", []string{"UTF-8"}},
		{"window without a key", JobSpec{Queue: "q", UniqueFor: time.Minute}, "UniqueFor", []string{"needs a unique key"}},
		{"negative window", JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: -time.Second}, "UniqueFor", []string{"negative", "-1s"}},
		{"negative window without a key", JobSpec{Queue: "q", UniqueFor: -time.Second}, "UniqueFor", []string{"negative"}},
		{"window over a year", JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: MaxUniqueFor + time.Millisecond}, "UniqueFor", []string{"over the limit", "8760h0m0s"}},
		{"window under 1ms", JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: 999 * time.Microsecond}, "UniqueFor", []string{"at least 1ms", "999µs"}},
		{"window of 1ns", JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: 1}, "UniqueFor", []string{"at least 1ms"}},
		{"after finish without a window", JobSpec{Queue: "q", UniqueKey: "k", UniqueAfterFinish: true}, "UniqueAfterFinish", []string{"needs a window"}},
		{"after finish without a key or window", JobSpec{Queue: "q", UniqueAfterFinish: true}, "UniqueAfterFinish", nil},
		// The queue and the id are checked first, the priority before the
		// unique fields.
		{"bad queue and bad priority", JobSpec{Queue: "", Priority: 7}, "Queue", nil},
		{"bad id and bad unique key", JobSpec{Queue: "q", ID: " ", UniqueKey: " "}, "ID", nil},
		{"bad priority and bad unique key", JobSpec{Queue: "q", Priority: 2, UniqueKey: " "}, "Priority", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Client{cfg: Config{}.withDefaults()}
			_, err := c.newJob(&tt.spec, newJobTestNow)
			requireInvalidField(t, err, tt.wantField, tt.wantInErr...)
			if !strings.HasPrefix(err.Error(), "invalid "+tt.wantField+": ") {
				t.Errorf("err = %q; want it to start with %q", err, "invalid "+tt.wantField+": ")
			}
		})
	}
}

// TestClientNewJobPriorityAndUnique: valid priorities and unique fields
// reach the store job as given, the window whole milliseconds, and the job
// is marked as having a caller-chosen id exactly when the spec has one.
func TestClientNewJobPriorityAndUnique(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		spec         JobSpec
		wantPriority store.Priority
		wantUnique   store.Unique
	}{
		{"defaults", JobSpec{Queue: "q"}, store.PriorityNormal, store.Unique{}},
		{"low", JobSpec{Queue: "q", Priority: PriorityLow}, store.PriorityLow, store.Unique{}},
		{"high", JobSpec{Queue: "q", Priority: PriorityHigh}, store.PriorityHigh, store.Unique{}},
		{"key only", JobSpec{Queue: "q", UniqueKey: "user:42"}, store.PriorityNormal, store.Unique{Key: "user:42"}},
		{"key of 256 bytes", JobSpec{Queue: "q", UniqueKey: strings.Repeat("k", MaxIDLen)}, store.PriorityNormal, store.Unique{Key: strings.Repeat("k", MaxIDLen)}},
		{"key of any printable runes", JobSpec{Queue: "q", UniqueKey: "订单:{42}/📦"}, store.PriorityNormal, store.Unique{Key: "订单:{42}/📦"}},
		{"window 1ms", JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: time.Millisecond}, store.PriorityNormal, store.Unique{Key: "k", For: time.Millisecond}},
		{"window truncated to ms", JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: 1500 * time.Microsecond}, store.PriorityNormal, store.Unique{Key: "k", For: time.Millisecond}},
		{"window of a year", JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: MaxUniqueFor}, store.PriorityNormal, store.Unique{Key: "k", For: MaxUniqueFor}},
		{"after finish", JobSpec{Queue: "q", Priority: PriorityHigh, UniqueKey: "k", UniqueFor: time.Hour, UniqueAfterFinish: true}, store.PriorityHigh, store.Unique{Key: "k", For: time.Hour, AfterFinish: true}},
		{"own id", JobSpec{Queue: "q", ID: "order-1", Priority: PriorityLow, UniqueKey: "order-1"}, store.PriorityLow, store.Unique{Key: "order-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := &Client{cfg: Config{}.withDefaults()}
			got, err := c.newJob(&tt.spec, newJobTestNow)
			if err != nil {
				t.Fatalf("newJob = %v; want nil", err)
			}
			if got.Priority != tt.wantPriority || got.Unique != tt.wantUnique {
				t.Errorf("newJob = {Priority:%d Unique:%+v}; want {%d %+v}", got.Priority, got.Unique, tt.wantPriority, tt.wantUnique)
			}
			if got.CallerID != (tt.spec.ID != "") {
				t.Errorf("CallerID = %v; want %v (spec ID %q)", got.CallerID, tt.spec.ID != "", tt.spec.ID)
			}
		})
	}
}

func TestParsePriority(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want Priority
	}{
		{"low", PriorityLow},
		{"LOW", PriorityLow},
		{"", PriorityNormal},
		{"normal", PriorityNormal},
		{"Normal", PriorityNormal},
		{"high", PriorityHigh},
		{"HiGh", PriorityHigh},
	}
	for _, tt := range good {
		got, err := ParsePriority(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParsePriority(%q) = %v, %v; want %v, nil", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"urgent", "medium", "1", "-1", " high", "high ", "h", "lowest", "\x00"} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			t.Parallel()
			got, err := ParsePriority(in)
			requireInvalidField(t, err, "Priority", "low, normal or high")
			if got != PriorityNormal {
				t.Errorf("ParsePriority(%q) = %v with the error; want the zero Priority", in, got)
			}
		})
	}
	// String and ParsePriority agree on every level.
	for _, p := range []Priority{PriorityLow, PriorityNormal, PriorityHigh} {
		if got, err := ParsePriority(p.String()); err != nil || got != p {
			t.Errorf("ParsePriority(%q) = %v, %v; want %v", p.String(), got, err, p)
		}
	}
	if s := Priority(5).String(); s != "Priority(5)" {
		t.Errorf("Priority(5).String() = %q; want %q", s, "Priority(5)")
	}
}

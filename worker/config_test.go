package worker

import (
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	custom := Config{
		Prefix:           "app:courier",
		MaxPayloadBytes:  10,
		MaxResultBytes:   10,
		MaxScheduleAhead: time.Hour,
		Lease:            time.Minute,
		ShutdownTimeout:  time.Second,
		PollInterval:     2 * time.Second,
		RecoverInterval:  3 * time.Second,
		LeaderLease:      4 * time.Second,
		DeadMaxJobs:      5,
		DeadMaxAge:       6 * time.Hour,
		HistoryRetention: 7 * time.Hour,
		Version:          "v1.2.3",
		Logger:           logger,
	}
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{
			name: "zero value",
			in:   Config{},
			want: Config{
				Prefix:           "courier",
				MaxPayloadBytes:  1 << 20,
				MaxResultBytes:   64 << 10,
				MaxScheduleAhead: 365 * 24 * time.Hour,
				Lease:            30 * time.Second,
				ShutdownTimeout:  25 * time.Second,
				PollInterval:     5 * time.Second,
				RecoverInterval:  time.Second,
				LeaderLease:      30 * time.Second,
				DeadMaxJobs:      10000,
				DeadMaxAge:       30 * 24 * time.Hour,
				HistoryRetention: 24 * time.Hour,
				Version:          moduleVersion(),
				Logger:           slog.Default(),
			},
		},
		{name: "every field set is kept", in: custom, want: custom},
		{
			// Negative values are kept so that validate can name them.
			name: "negative values kept",
			in:   Config{MaxPayloadBytes: -1, Lease: -time.Second, PollInterval: -1},
			want: Config{
				Prefix:           "courier",
				MaxPayloadBytes:  -1,
				MaxResultBytes:   64 << 10,
				MaxScheduleAhead: 365 * 24 * time.Hour,
				Lease:            -time.Second,
				ShutdownTimeout:  25 * time.Second,
				PollInterval:     -1,
				RecoverInterval:  time.Second,
				LeaderLease:      30 * time.Second,
				DeadMaxJobs:      10000,
				DeadMaxAge:       30 * 24 * time.Hour,
				HistoryRetention: 24 * time.Hour,
				Version:          moduleVersion(),
				Logger:           slog.Default(),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.in.withDefaults()
			if got.Logger == nil {
				t.Fatal("Logger is nil")
			}
			if got.Logger != tt.want.Logger {
				t.Errorf("Logger = %p; want %p", got.Logger, tt.want.Logger)
			}
			got.Logger, tt.want.Logger = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("withDefaults() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestConfigDefaultsAreValid(t *testing.T) {
	t.Parallel()
	if err := (Config{}).withDefaults().validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		mutate    func(c *Config)
		wantField string // "" when valid
		wantInErr []string
	}{
		{"defaults", func(*Config) {}, "", nil},
		{"namespaced prefix", func(c *Config) { c.Prefix = "app:courier" }, "", nil},
		{"prefix with braces", func(c *Config) { c.Prefix = "{x}" }, "Prefix", []string{"'{'"}},
		{"prefix with space", func(c *Config) { c.Prefix = "a b" }, "Prefix", []string{"' '"}},
		{"prefix too long", func(c *Config) { c.Prefix = strings.Repeat("p", 129) }, "Prefix", []string{"128"}},
		{"negative max payload", func(c *Config) { c.MaxPayloadBytes = -1 }, "MaxPayloadBytes", []string{"MaxPayloadBytes", "-1"}},
		{"negative max schedule ahead", func(c *Config) { c.MaxScheduleAhead = -time.Hour }, "MaxScheduleAhead", []string{"MaxScheduleAhead", "-1h"}},
		{"negative lease", func(c *Config) { c.Lease = -time.Second }, "Lease", []string{"Lease", "negative"}},
		{"negative shutdown timeout", func(c *Config) { c.ShutdownTimeout = -time.Second }, "ShutdownTimeout", []string{"ShutdownTimeout"}},
		{"negative poll interval", func(c *Config) { c.PollInterval = -time.Second }, "PollInterval", []string{"PollInterval"}},
		{"negative recover interval", func(c *Config) { c.RecoverInterval = -time.Nanosecond }, "RecoverInterval", []string{"RecoverInterval", "-1ns"}},
		{"lease 29ms", func(c *Config) { c.Lease = 29 * time.Millisecond }, "Lease", []string{"30ms", "29ms"}},
		{"lease 1ns", func(c *Config) { c.Lease = 1 }, "Lease", []string{"30ms"}},
		{"lease 30ms", func(c *Config) { c.Lease = 30 * time.Millisecond }, "", nil},
		{"max payload 1 byte", func(c *Config) { c.MaxPayloadBytes = 1 }, "", nil},
		{"history under an hour", func(c *Config) { c.HistoryRetention = 59 * time.Minute }, "HistoryRetention", []string{"1h0m0s to 720h0m0s", "59m0s"}},
		{"history over 30 days", func(c *Config) { c.HistoryRetention = 721 * time.Hour }, "HistoryRetention", []string{"721h0m0s"}},
		{"history an hour", func(c *Config) { c.HistoryRetention = time.Hour }, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Config{}.withDefaults()
			tt.mutate(&c)
			err := c.validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("validate() = %v; want nil", err)
				}
				return
			}
			requireInvalidField(t, err, tt.wantField, tt.wantInErr...)
		})
	}
}

// TestConfigValidateAfterDefaults runs the order NewClient and NewDaemon use:
// withDefaults then validate, from a user's Config.
func TestConfigValidateAfterDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       Config
		wantField string
	}{
		{"zero", Config{}, ""},
		{"negative lease", Config{Lease: -1}, "Lease"},
		{"tiny lease", Config{Lease: time.Millisecond}, "Lease"},
		{"bad prefix", Config{Prefix: "a{b}"}, "Prefix"},
		{"negative payload", Config{MaxPayloadBytes: -5}, "MaxPayloadBytes"},
		{"negative result", Config{MaxResultBytes: -5}, "MaxResultBytes"},
		{"result beyond the payload limit", Config{MaxResultBytes: MaxPayloadBytesLimit + 1}, "MaxResultBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.withDefaults().validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("validate() = %v; want nil", err)
				}
				return
			}
			requireInvalidField(t, err, tt.wantField, tt.wantField)
		})
	}
}

// TestQueueOptionsValidatePriorityAndRetention: PriorityWeights and
// IDRetention are checked by QueueOptions.Validate and by Register, each
// error naming the field.
func TestQueueOptionsValidatePriorityAndRetention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		mutate    func(o *QueueOptions)
		wantField string // "" when valid
		wantInErr []string
	}{
		{"strict priority", func(*QueueOptions) {}, "", nil},
		{"even weights", func(o *QueueOptions) { o.PriorityWeights = PriorityWeights{High: 1, Normal: 1, Low: 1} }, "", nil},
		{"largest weights", func(o *QueueOptions) { o.PriorityWeights = PriorityWeights{High: 1000, Normal: 1000, Low: 1000} }, "", nil},
		{"a zero weight", func(o *QueueOptions) { o.PriorityWeights = PriorityWeights{High: 8, Normal: 0, Low: 1} }, "", nil},
		{"only low weighted", func(o *QueueOptions) { o.PriorityWeights = PriorityWeights{Low: 1} }, "", nil},
		{"negative high weight", func(o *QueueOptions) { o.PriorityWeights = PriorityWeights{High: -1, Normal: 1, Low: 1} }, "PriorityWeights", []string{"0 to 1000", "-1"}},
		{"negative low weight", func(o *QueueOptions) { o.PriorityWeights = PriorityWeights{High: 3, Low: -2} }, "PriorityWeights", []string{"-2"}},
		{"normal weight over 1000", func(o *QueueOptions) { o.PriorityWeights = PriorityWeights{High: 1, Normal: 1001, Low: 1} }, "PriorityWeights", []string{"0 to 1000", "1001"}},
		{"id retention 1ms", func(o *QueueOptions) { o.IDRetention = time.Millisecond }, "", nil},
		{"id retention of a year", func(o *QueueOptions) { o.IDRetention = MaxUniqueFor }, "", nil},
		{"negative id retention", func(o *QueueOptions) { o.IDRetention = -time.Second }, "IDRetention", []string{"negative", "-1s"}},
		{"id retention over a year", func(o *QueueOptions) { o.IDRetention = MaxUniqueFor + time.Millisecond }, "IDRetention", []string{"over the limit", "8760h0m0s"}},
		{"id retention under 1ms", func(o *QueueOptions) { o.IDRetention = 500 * time.Microsecond }, "IDRetention", []string{"at least 1ms", "500µs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var o QueueOptions
			tt.mutate(&o)
			err := o.Validate()
			regErr := NewRegistry().Register("q", noopJobHandler, o)
			if tt.wantField == "" {
				if err != nil || regErr != nil {
					t.Fatalf("Validate() = %v, Register = %v; want nil", err, regErr)
				}
				return
			}
			requireInvalidField(t, err, tt.wantField, append([]string{tt.wantField}, tt.wantInErr...)...)
			requireInvalidField(t, regErr, tt.wantField, `"q"`)
		})
	}
}

// TestQueueOptionsValidateReportsEveryField: a bad weight and a bad
// retention are both reported, with the other fields' errors.
func TestQueueOptionsValidateReportsEveryField(t *testing.T) {
	t.Parallel()
	err := QueueOptions{Concurrency: -1, PriorityWeights: PriorityWeights{High: 2000}, IDRetention: -1}.Validate()
	for _, field := range []string{"Concurrency", "PriorityWeights", "IDRetention"} {
		if err == nil || !strings.Contains(err.Error(), "invalid "+field+": ") {
			t.Errorf("Validate() = %v; want it to name %s", err, field)
		}
	}
}

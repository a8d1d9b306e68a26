package worker

import (
	"log/slog"
	"time"
)

// Defaults of Config.
const (
	PrefixDefault           = "courier"
	MaxPayloadBytesDefault  = 1 << 20
	MaxScheduleAheadDefault = 365 * 24 * time.Hour
	LeaseDefault            = 30 * time.Second
	ShutdownTimeoutDefault  = 25 * time.Second
	PollIntervalDefault     = 5 * time.Second
	RecoverIntervalDefault  = time.Second

	// MaxPayloadBytesLimit is the largest MaxPayloadBytes allowed: Redis
	// refuses strings over 512 MiB, and a payload travels in one script call.
	MaxPayloadBytesLimit = 256 << 20
)

// Config is shared by Client and Daemon; the zero value of each field means
// its default.
type Config struct {
	// Prefix starts every Redis key; processes must agree on it.
	// Allowed: A-Z a-z 0-9 . _ - and ':'. Default "courier".
	Prefix string
	// MaxPayloadBytes is the largest payload Enqueue accepts. Default 1 MiB.
	MaxPayloadBytes int
	// MaxScheduleAhead is how far in the future a job may be scheduled.
	// Default one year.
	MaxScheduleAhead time.Duration
	// Lease is how long a claimed job is reserved for its worker; the daemon
	// renews it every Lease/3, and a job whose worker died is recovered
	// after it lapses. Default 30s.
	Lease time.Duration
	// ShutdownTimeout is how long running jobs may finish once Run's context
	// ends, before they are cancelled and handed back. Default 25s.
	ShutdownTimeout time.Duration
	// PollInterval is the safety poll of an idle queue, in case a wake-up
	// message was lost. Default 5s.
	PollInterval time.Duration
	// RecoverInterval is how often expired leases are recovered. Default 1s.
	RecoverInterval time.Duration
	// Logger receives the daemon's logs. Default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = PrefixDefault
	}
	if c.MaxPayloadBytes == 0 {
		c.MaxPayloadBytes = MaxPayloadBytesDefault
	}
	durations := []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&c.MaxScheduleAhead, MaxScheduleAheadDefault},
		{&c.Lease, LeaseDefault},
		{&c.ShutdownTimeout, ShutdownTimeoutDefault},
		{&c.PollInterval, PollIntervalDefault},
		{&c.RecoverInterval, RecoverIntervalDefault},
	}
	for _, d := range durations {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports the first invalid field of c, defaults applied, as a
// *ValidationError naming it (prefix, max_payload_bytes, lease, ...).
// NewClient and NewDaemon call it; configuration loaders call it to report
// problems before connecting.
func (c Config) Validate() error { return c.withDefaults().validate() }

func (c Config) validate() error {
	if err := validatePrefix(c.Prefix); err != nil {
		return err
	}
	if c.MaxPayloadBytes < 0 || c.MaxPayloadBytes > MaxPayloadBytesLimit {
		return invalid("max_payload_bytes", "must be 0 to %d (got %d)", MaxPayloadBytesLimit, c.MaxPayloadBytes)
	}
	positive := []struct {
		name string
		v    time.Duration
	}{
		{"max_schedule_ahead", c.MaxScheduleAhead},
		{"lease", c.Lease},
		{"shutdown_timeout", c.ShutdownTimeout},
		{"poll_interval", c.PollInterval},
		{"recover_interval", c.RecoverInterval},
	}
	for _, p := range positive {
		if p.v < 0 {
			return invalid(p.name, "must not be negative (got %s)", p.v)
		}
	}
	if c.Lease < 30*time.Millisecond {
		return invalid("lease", "must be at least 30ms (got %s)", c.Lease)
	}
	if c.PollInterval < 10*time.Millisecond {
		return invalid("poll_interval", "must be at least 10ms (got %s)", c.PollInterval)
	}
	if c.RecoverInterval < 10*time.Millisecond {
		return invalid("recover_interval", "must be at least 10ms (got %s)", c.RecoverInterval)
	}
	return nil
}

package worker

import (
	"errors"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-53d105c9/courier/worker/lock"
)

// Defaults of Config.
const (
	PrefixDefault           = "courier"
	MaxPayloadBytesDefault  = 1 << 20
	MaxResultBytesDefault   = 64 << 10
	MaxScheduleAheadDefault = 365 * 24 * time.Hour
	LeaseDefault            = 30 * time.Second
	ShutdownTimeoutDefault  = 25 * time.Second
	PollIntervalDefault     = 5 * time.Second
	RecoverIntervalDefault  = time.Second
	LeaderLeaseDefault      = lock.LeaseDefault
	DeadMaxJobsDefault      = 10000
	DeadMaxAgeDefault       = 30 * 24 * time.Hour
	HistoryRetentionDefault = 24 * time.Hour

	// HistoryRetentionMin and HistoryRetentionMax bound HistoryRetention
	// (a busy queue's day of history is about 750 KiB of Redis memory).
	HistoryRetentionMin = time.Hour
	HistoryRetentionMax = 30 * 24 * time.Hour

	// MaxPayloadBytesLimit is the largest MaxPayloadBytes allowed: Redis
	// refuses strings over 512 MiB, and a payload travels in one script call.
	MaxPayloadBytesLimit = 256 << 20
)

// The smallest durations Config accepts.
const (
	leaseMin           = 30 * time.Millisecond  // renewed every 10ms
	leaderLeaseMin     = 300 * time.Millisecond // renewed every 100ms, margin 50ms
	pollIntervalMin    = 10 * time.Millisecond
	recoverIntervalMin = 10 * time.Millisecond
)

// Config is shared by Client and Daemon; the zero value of each field means
// its default.
type Config struct {
	// Prefix starts every Redis key; processes must agree on it.
	// Allowed: A-Z a-z 0-9 . _ - and ':'. Default "courier".
	Prefix string
	// MaxPayloadBytes is the largest payload Enqueue accepts. Default 1 MiB.
	MaxPayloadBytes int
	// MaxResultBytes is the largest result a handler may set
	// (Job.SetResult), at most MaxPayloadBytesLimit. Default 64 KiB.
	MaxResultBytes int
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
	// RecoverInterval is how often the queue's leader recovers expired
	// leases (after a blip, only once holders had time to renew). Default
	// 1s.
	RecoverInterval time.Duration
	// LeaderLease is the lease of each queue's leader lock, renewed every
	// LeaderLease/3: a dead leader's follower takes over within it (at once
	// after a graceful stop). Default 30s.
	LeaderLease time.Duration
	// DeadMaxJobs and DeadMaxAge bound each queue's dead set; the leader
	// deletes the oldest dead jobs beyond them. Defaults 10,000 and 30 days.
	DeadMaxJobs int
	DeadMaxAge  time.Duration
	// HistoryRetention is how long each queue's per-minute history
	// (admin.Client.History) is kept; the leader deletes older minutes. 1h
	// to 30 days. Default 24h.
	HistoryRetention time.Duration
	// Version is what a Daemon reports to its queues' fleets as its
	// version (admin.FleetProcess.Version), for the operator's view of a
	// rolling upgrade. Default: the version of this module in the program's build
	// information, or "(devel)".
	Version string
	// Durability is a Client's default Durability per queue name, for the
	// jobs enqueued without their own (JobSpec.Durability). Default: none.
	Durability map[string]Durability
	// RefuseUnserved makes a Client refuse, with ErrUnserved and writing
	// nothing, an enqueue to a queue or kind no Daemon has ever served (a
	// typo such as "reprots"): one read per enqueue call, none while the
	// Client remembers the queue served (30s). Default false: only the
	// operator's admin.Client.Enqueue warns (EnqueueResult.Warning).
	RefuseUnserved bool
	// Registerer receives the metrics (docs/monitoring.md) of a Daemon or
	// a Client; several may share one, and its series. Nil: no metrics.
	Registerer prometheus.Registerer
	// Logger receives the daemon's logs. Default slog.Default().
	Logger *slog.Logger
	// TracerProvider turns tracing on: a Client starts a producer span per
	// enqueue call and writes its trace context into each job's headers; a
	// Daemon starts a consumer span per attempt, its child, and hands it to
	// the handler in its context. Nil (the default): no tracing, no cost.
	TracerProvider trace.TracerProvider
}

func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = PrefixDefault
	}
	if c.MaxPayloadBytes == 0 {
		c.MaxPayloadBytes = MaxPayloadBytesDefault
	}
	if c.MaxResultBytes == 0 {
		c.MaxResultBytes = MaxResultBytesDefault
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
		{&c.LeaderLease, LeaderLeaseDefault},
		{&c.DeadMaxAge, DeadMaxAgeDefault},
		{&c.HistoryRetention, HistoryRetentionDefault},
	}
	for _, d := range durations {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if c.DeadMaxJobs == 0 {
		c.DeadMaxJobs = DeadMaxJobsDefault
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Version == "" {
		c.Version = moduleVersion()
	}
	return c
}

// Validate reports every invalid field of c, defaults applied: each a
// *ValidationError naming the Go field (Prefix, MaxPayloadBytes, Lease, …),
// joined with errors.Join. NewClient and NewDaemon call it; configuration
// loaders call it to report problems before connecting, and map the fields
// to their own names.
func (c Config) Validate() error { return c.withDefaults().validate() }

func (c Config) validate() error {
	var errs []error
	if err := validatePrefix(c.Prefix); err != nil {
		errs = append(errs, err)
	}
	if c.MaxPayloadBytes < 0 || c.MaxPayloadBytes > MaxPayloadBytesLimit {
		errs = append(errs, invalid("MaxPayloadBytes", "must be 0 to %d (got %d)", MaxPayloadBytesLimit, c.MaxPayloadBytes))
	}
	if c.MaxResultBytes < 0 || c.MaxResultBytes > MaxPayloadBytesLimit {
		errs = append(errs, invalid("MaxResultBytes", "must be 0 to %d (got %d)", MaxPayloadBytesLimit, c.MaxResultBytes))
	}
	durations := []struct {
		field  string
		v, min time.Duration
	}{
		{"MaxScheduleAhead", c.MaxScheduleAhead, 0},
		{"Lease", c.Lease, leaseMin},
		{"ShutdownTimeout", c.ShutdownTimeout, 0},
		{"PollInterval", c.PollInterval, pollIntervalMin},
		{"RecoverInterval", c.RecoverInterval, recoverIntervalMin},
		{"LeaderLease", c.LeaderLease, leaderLeaseMin},
		{"DeadMaxAge", c.DeadMaxAge, 0},
	}
	for _, d := range durations {
		switch {
		case d.v < 0:
			errs = append(errs, invalid(d.field, "must not be negative (got %s)", d.v))
		case d.v < d.min:
			errs = append(errs, invalid(d.field, "must be at least %s (got %s)", d.min, d.v))
		}
	}
	if c.HistoryRetention < HistoryRetentionMin || c.HistoryRetention > HistoryRetentionMax {
		errs = append(errs, invalid("HistoryRetention", "must be %s to %s (got %s)", HistoryRetentionMin, HistoryRetentionMax, c.HistoryRetention))
	}
	if c.DeadMaxJobs < 0 {
		errs = append(errs, invalid("DeadMaxJobs", "must not be negative (got %d)", c.DeadMaxJobs))
	}
	if err := validateDurabilities(c.Durability); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

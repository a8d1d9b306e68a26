// Package config loads the configuration of the courier daemon and its
// client commands: defaults, then a YAML file, then COURIER_* environment
// variables, then command-line flags, each layer overriding the one before.
//
// configs/courier.yaml is the reference: it holds every key with its default
// and a comment. Unknown keys, values of the wrong type and invalid values
// stop the load with one message per problem, each naming its key. A
// message never shows a value under a secret key (see Secret and
// handlers.Decoder), whatever its type.
//
// Environment variables map to keys by dropping the COURIER_ prefix,
// lower-casing, and reading a double underscore as a level of nesting:
// COURIER_REDIS__ADDR is redis.addr, COURIER_QUEUES__EMAILS__MAX_ATTEMPTS is
// queues.emails.max_attempts. A list is written with commas
// (COURIER_REDIS__ADDR=10.0.0.1:6379,10.0.0.2:6379). A COURIER_* variable
// that sets nothing (no double underscore, or empty) is a warning, not an
// error, unless it is known not to be configuration (NonConfigVariables).
//
// LoadFull returns, besides the configuration, the layer that set each key
// and those warnings; Loaded.YAML and Loaded.JSON render the configuration
// with both, secrets redacted (courier config print).
package config

import (
	"log/slog"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Config is the whole configuration. The koanf tags are the keys.
type Config struct {
	Redis    Redis            `koanf:"redis"`
	HTTP     HTTP             `koanf:"http"`
	Log      Log              `koanf:"log"`
	Shutdown Shutdown         `koanf:"shutdown"`
	Lease    Lease            `koanf:"lease"`
	Jobs     Jobs             `koanf:"jobs"`
	Poll     Poll             `koanf:"poll"`
	Leader   Leader           `koanf:"leader"`
	Recover  Recover          `koanf:"recover"`
	Dead     Dead             `koanf:"dead"`
	History  History          `koanf:"history"`
	Admin    Admin            `koanf:"admin"`
	UI       UI               `koanf:"ui"`
	Tracing  Tracing          `koanf:"tracing"`
	Queues   map[string]Queue `koanf:"queues"`
}

// Leader configures the per-queue leader election.
type Leader struct {
	// Lease of each queue's leader lock, renewed every lease/3; a dead
	// leader is replaced after at most this long.
	Lease time.Duration `koanf:"lease"`
}

// Recover configures the leader's recovery of expired leases.
type Recover struct {
	Interval time.Duration `koanf:"interval"`
}

// Dead bounds each queue's dead set; the leader trims it.
type Dead struct {
	MaxJobs int           `koanf:"max_jobs"`
	MaxAge  time.Duration `koanf:"max_age"`
}

// Redis says how to reach Redis.
type Redis struct {
	// Addr lists host:port addresses: one server, any nodes of a cluster
	// (detected by itself), or the sentinels when Sentinel.Master is set.
	Addr     []string `koanf:"addr"`
	Username string   `koanf:"username"`
	Password Secret   `koanf:"password"`
	DB       int      `koanf:"db"`
	// Prefix starts every key Courier writes; processes must agree on it.
	Prefix   string   `koanf:"prefix"`
	TLS      TLS      `koanf:"tls"`
	Sentinel Sentinel `koanf:"sentinel"`
	// DialTimeout bounds connecting to one address.
	DialTimeout time.Duration `koanf:"dial_timeout"`
}

// TLS configures TLS to Redis.
type TLS struct {
	Enabled            bool   `koanf:"enabled"`
	CAFile             string `koanf:"ca_file"`
	CertFile           string `koanf:"cert_file"`
	KeyFile            string `koanf:"key_file"`
	ServerName         string `koanf:"server_name"`
	InsecureSkipVerify bool   `koanf:"insecure_skip_verify"`
}

// Sentinel configures Redis Sentinel; Redis.Addr then lists the sentinels.
type Sentinel struct {
	Master   string `koanf:"master"`
	Username string `koanf:"username"`
	Password Secret `koanf:"password"`
}

// Log configures logging.
type Log struct {
	Level  string `koanf:"level"`  // debug, info, warn, error
	Format string `koanf:"format"` // text, json
}

// Shutdown configures the drain on SIGTERM / SIGINT.
type Shutdown struct {
	Timeout time.Duration `koanf:"timeout"`
}

// Lease configures job leases.
type Lease struct {
	Duration time.Duration `koanf:"duration"`
}

// Jobs holds limits on the jobs producers may enqueue.
type Jobs struct {
	MaxPayloadBytes  int           `koanf:"max_payload_bytes"`
	MaxScheduleAhead time.Duration `koanf:"max_schedule_ahead"`
	// MaxResultBytes bounds what a handler may set as its job's result
	// (worker.Config.MaxResultBytes).
	MaxResultBytes int `koanf:"max_result_bytes"`
}

// Poll configures the safety poll of idle queues.
type Poll struct {
	Interval time.Duration `koanf:"interval"`
}

// Queue configures one queue this daemon serves.
type Queue struct {
	// Handler names a built-in handler (see package handlers).
	Handler     string        `koanf:"handler"`
	Concurrency int           `koanf:"concurrency"`
	MaxAttempts int           `koanf:"max_attempts"`
	Timeout     time.Duration `koanf:"timeout"`
	Backoff     Backoff       `koanf:"backoff"`
	// RateLimit is "N per DURATION" (or "N/DURATION"): at most N jobs of
	// the queue start in any window of DURATION, across every process;
	// "" = no limit.
	RateLimit string `koanf:"rate_limit"`
	// Periodic lists jobs the queue's leader enqueues on a schedule, by
	// schedule name.
	Periodic map[string]Periodic `koanf:"periodic"`
	// PriorityWeights share each claim among the priority levels that have
	// jobs due (worker.PriorityWeights); all zero = strict priority.
	PriorityWeights PriorityWeights `koanf:"priority_weights"`
	// IDRetention keeps a caller-supplied job id refused this long after
	// its job finished (worker.QueueOptions.IDRetention); 0 = only while
	// the job exists.
	IDRetention time.Duration `koanf:"id_retention"`
	// Partitions splits the queue into this many partitions, each its own
	// hash slot (worker.QueueOptions.Partitions), 1 to 64.
	Partitions int `koanf:"partitions"`
	// KeyConcurrency caps how many jobs of one job key run at once,
	// across every process (worker.QueueOptions.KeyConcurrency); 0 = no
	// cap.
	KeyConcurrency int `koanf:"key_concurrency"`
	// KeyRateLimit is "N per DURATION": at most N jobs of one job key
	// start in any window of DURATION, across every process
	// (worker.QueueOptions.KeyRateLimit); "" = no limit.
	KeyRateLimit string `koanf:"key_rate_limit"`
	// Durability is the confirmation on replicas the jobs the daemon's API
	// enqueues to the queue wait for when they ask for none of their own
	// (worker.Config.Durability); zero = none.
	Durability Durability `koanf:"durability"`
	// RetainCompleted keeps the queue's finished jobs, with their results
	// (worker.QueueOptions.RetainCompleted); zero = none kept.
	RetainCompleted RetainCompleted `koanf:"retain_completed"`
	// Settings holds the handler's own section, queues.<name>.<handler>,
	// decoded by the handler; any other key of the queue is refused.
	Settings map[string]any `koanf:",remain"`
}

// Durability is a queue's default confirmation of an enqueue on replicas
// (worker.Durability, field for field).
type Durability struct {
	Replicas int           `koanf:"replicas"`
	Timeout  time.Duration `koanf:"timeout"`
	AOF      bool          `koanf:"aof"`
}

// RetainCompleted bounds the finished jobs a queue keeps
// (worker.Retention, field for field).
type RetainCompleted struct {
	Count int           `koanf:"count"`
	Age   time.Duration `koanf:"age"`
}

// Periodic is one schedule of a queue's periodic jobs (worker.Periodic).
type Periodic struct {
	Every       time.Duration `koanf:"every"`
	Cron        string        `koanf:"cron"`
	Payload     string        `koanf:"payload"`
	MaxAttempts int           `koanf:"max_attempts"`
	Timeout     time.Duration `koanf:"timeout"`
	SkipMissed  bool          `koanf:"skip_missed"`
}

// PriorityWeights are a queue's weights of its priority levels, 0 to 1000
// each: worker.PriorityWeights, field for field (Queue.options converts
// one to the other).
type PriorityWeights struct {
	High   int `koanf:"high"`
	Normal int `koanf:"normal"`
	Low    int `koanf:"low"`
}

// Backoff is a queue's retry policy: exponential (Base, Cap) unless Steps is
// set.
type Backoff struct {
	Base  time.Duration   `koanf:"base"`
	Cap   time.Duration   `koanf:"cap"`
	Steps []time.Duration `koanf:"steps"`
}

// Default values; the reference file configs/courier.yaml repeats them.
const (
	RedisAddrDefault        = "127.0.0.1:6379"
	RedisDialTimeoutDefault = 5 * time.Second
	LogLevelDefault         = "info"
	LogFormatDefault        = "text"
)

// Default returns the configuration with every default filled in.
func Default() Config {
	return Config{
		Redis: Redis{
			Addr:        []string{RedisAddrDefault},
			Prefix:      worker.PrefixDefault,
			DialTimeout: RedisDialTimeoutDefault,
		},
		HTTP:     httpDefault(),
		Log:      Log{Level: LogLevelDefault, Format: LogFormatDefault},
		Shutdown: Shutdown{Timeout: worker.ShutdownTimeoutDefault},
		Lease:    Lease{Duration: worker.LeaseDefault},
		Jobs: Jobs{
			MaxPayloadBytes:  worker.MaxPayloadBytesDefault,
			MaxScheduleAhead: worker.MaxScheduleAheadDefault,
			MaxResultBytes:   worker.MaxResultBytesDefault,
		},
		Poll:    Poll{Interval: worker.PollIntervalDefault},
		Leader:  Leader{Lease: worker.LeaderLeaseDefault},
		Recover: Recover{Interval: worker.RecoverIntervalDefault},
		Dead:    Dead{MaxJobs: worker.DeadMaxJobsDefault, MaxAge: worker.DeadMaxAgeDefault},
		History: History{Retention: worker.HistoryRetentionDefault},
		Admin:   adminDefault(),
		UI:      uiDefault(),
		// Tracing: every key empty, off unless OTEL_TRACES_EXPORTER says otlp.
	}
}

// QueueDefault is the configuration a queue starts from before its keys are
// read.
func QueueDefault() Queue {
	return Queue{
		Concurrency: worker.ConcurrencyDefault,
		MaxAttempts: worker.MaxAttemptsDefault,
		Timeout:     worker.TimeoutDefault,
		Backoff:     Backoff{Base: worker.BackoffBaseDefault, Cap: worker.BackoffCapDefault},
		Partitions:  1,
	}
}

// Worker returns the library configuration for logger.
func (c *Config) Worker(logger *slog.Logger) worker.Config {
	return worker.Config{
		Prefix:           c.Redis.Prefix,
		MaxPayloadBytes:  c.Jobs.MaxPayloadBytes,
		MaxScheduleAhead: c.Jobs.MaxScheduleAhead,
		MaxResultBytes:   c.Jobs.MaxResultBytes,
		Lease:            c.Lease.Duration,
		ShutdownTimeout:  c.Shutdown.Timeout,
		PollInterval:     c.Poll.Interval,
		RecoverInterval:  c.Recover.Interval,
		LeaderLease:      c.Leader.Lease,
		DeadMaxJobs:      c.Dead.MaxJobs,
		DeadMaxAge:       c.Dead.MaxAge,
		HistoryRetention: c.History.Retention,
		Durability:       c.durabilities(),
		Logger:           logger,
	}
}

// durabilities are the queues' Durability, for worker.Config.Durability:
// those that ask for one; nil when none does.
func (c *Config) durabilities() map[string]worker.Durability {
	var m map[string]worker.Durability
	for name, q := range c.Queues {
		if q.Durability == (Durability{}) {
			continue
		}
		if m == nil {
			m = make(map[string]worker.Durability)
		}
		m[name] = worker.Durability(q.Durability)
	}
	return m
}

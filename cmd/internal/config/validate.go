package config

import (
	"errors"
	"log/slog"
	"maps"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/handlers"
	"github.com/seed-53d105c9/courier/worker"
)

// validate adds a problem for every invalid value of a decoded configuration.
func (c *Config) validate(ps *problems) {
	c.validateRedis(ps)
	c.HTTP.validate(c.Admin.Addr, ps)
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		ps.add("log.level", "must be debug, info, warn or error (got %q)", c.Log.Level)
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		ps.add("log.format", "must be text or json (got %q)", c.Log.Format)
	}
	if c.Shutdown.Timeout <= 0 {
		ps.add("shutdown.timeout", "must be positive (got %s)", c.Shutdown.Timeout)
	}
	// The library reports every bad field of its Config by Go name.
	libraryProblems(ps, c.Worker(nil).Validate(), func(field string) (string, bool) {
		key, ok := libraryKeys["Config."+field]
		return key, ok && !ps.has(key) // shutdown.timeout and dead.max_jobs are checked above and below
	})
	if c.Dead.MaxJobs < 1 {
		ps.add("dead.max_jobs", "must be at least 1 (got %d)", c.Dead.MaxJobs)
	}
	c.Admin.validate(ps)
	c.UI.validate(ps)
	c.Tracing.validate(ps)
	for _, name := range slices.Sorted(maps.Keys(c.Queues)) {
		q := c.Queues[name]
		validateQueue("queues."+name, name, &q, ps)
	}
}

func (c *Config) validateRedis(ps *problems) {
	r := &c.Redis
	if len(r.Addr) == 0 {
		ps.add("redis.addr", "at least one host:port is required")
	}
	for i, a := range r.Addr {
		if err := checkHostPort(a); err != nil {
			ps.add("redis.addr["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	if r.DB < 0 {
		ps.add("redis.db", "must not be negative (got %d)", r.DB)
	}
	if r.DialTimeout <= 0 {
		ps.add("redis.dial_timeout", "must be positive (got %s)", r.DialTimeout)
	}
	if r.Sentinel.Master == "" && (r.Sentinel.Username != "" || r.Sentinel.Password != "") {
		ps.add("redis.sentinel.master", "is required when sentinel credentials are set")
	}
	t := r.TLS
	if !t.Enabled && (t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify) {
		ps.add("redis.tls.enabled", "is false, but other redis.tls keys are set; set it to true to use TLS")
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		ps.add("redis.tls.cert_file", "cert_file and key_file go together: set both or neither")
	}
	if t.Enabled && (t.CertFile == "") == (t.KeyFile == "") {
		if _, err := t.config(); err != nil {
			key, msg, _ := strings.Cut(err.Error(), ": ")
			ps.add(key, "%s", msg)
		}
	}
}

// validateQueue checks one queue, building its handler to check the
// handler's own settings.
func validateQueue(key, name string, q *Queue, ps *problems) {
	if err := worker.ValidateQueueName(name); err != nil {
		ps.add(key, "is not a valid queue name: %s", reason(err))
		return
	}
	if q.Concurrency == 0 {
		ps.add(key+".concurrency", "must be at least 1 (got 0)")
	}
	if q.MaxAttempts == 0 {
		ps.add(key+".max_attempts", "must be at least 1 (got 0)")
	}
	if q.Timeout == 0 {
		ps.add(key+".timeout", "must be positive (got 0s)")
	}
	if q.Partitions == 0 {
		ps.add(key+".partitions", "must be 1 to %d (got 0)", worker.MaxPartitions)
	}
	opts := worker.QueueOptions{Concurrency: q.Concurrency, MaxAttempts: q.MaxAttempts, Timeout: q.Timeout, Periodic: q.periodic(),
		IDRetention: q.IDRetention, Partitions: q.Partitions, RetainCompleted: worker.Retention(q.RetainCompleted),
		KeyConcurrency: q.KeyConcurrency}
	if limit, err := worker.ParseRateLimit(q.RateLimit); err != nil {
		ps.add(key+".rate_limit", "%v", err)
	} else {
		opts.RateLimit = limit
	}
	if limit, err := worker.ParseRateLimit(q.KeyRateLimit); err != nil {
		ps.add(key+".key_rate_limit", "%v", err)
	} else {
		opts.KeyRateLimit = limit
	}
	if validateWeights(key+".priority_weights", q.PriorityWeights, ps) {
		opts.PriorityWeights = worker.PriorityWeights(q.PriorityWeights)
	}
	schedules := slices.Sorted(maps.Keys(q.Periodic)) // the order of q.periodic()
	libraryProblems(ps, opts.Validate(), func(field string) (string, bool) {
		if m := periodicField.FindStringSubmatch(field); m != nil {
			i, _ := strconv.Atoi(m[1])
			sub, ok := libraryKeys["Periodic."+m[2]]
			if i >= len(schedules) || !ok {
				return "", false
			}
			return key + ".periodic." + schedules[i] + sub, true
		}
		sub, ok := libraryKeys["QueueOptions."+field]
		return key + "." + sub, ok && !ps.has(key+"."+sub)
	})
	validateBackoff(key+".backoff", q.Backoff, ps)
	// The library checks Config.Durability too, by queue: named here, by
	// key, once (its Durability["<name>"] fields are not in libraryKeys).
	libraryProblems(ps, worker.Durability(q.Durability).Validate(), func(field string) (string, bool) {
		sub, ok := libraryKeys["Durability."+field]
		return key + ".durability." + sub, ok
	})

	b, ok := handlers.Lookup(q.Handler)
	if q.Handler == "" {
		ps.add(key+".handler", "is required (built-in handlers: %s)", strings.Join(handlers.Names(), ", "))
	} else if !ok {
		hint := "built-in handlers: " + strings.Join(handlers.Names(), ", ")
		if near := closeTo(q.Handler, handlers.Names()); near != "" {
			hint = "did you mean " + near + "?"
		}
		ps.add(key+".handler", "unknown handler %q (%s)", q.Handler, hint)
	}
	for _, k := range slices.Sorted(maps.Keys(q.Settings)) {
		switch {
		case k == q.Handler:
		case slices.Contains(handlers.Names(), k):
			ps.add(key+"."+k, "settings for handler %q, but the queue's handler is %q", k, q.Handler)
		default:
			ps.add(key+"."+k, "unknown key%s", suggest(k, queueKeys(q.Handler)))
		}
	}
	if ok {
		if _, err := buildHandler(key, name, q, b, slog.New(slog.DiscardHandler)); err != nil {
			*ps = append(*ps, problemsOf(err)...)
		}
	}
}

// queueKeys are the keys of a queue whose handler is handler: its own and
// the handler's section.
func queueKeys(handler string) []string {
	var keys []string
	for f := range reflect.TypeFor[Queue]().Fields() {
		if name, opt, _ := strings.Cut(f.Tag.Get("koanf"), ","); name != "" && opt != "remain" {
			keys = append(keys, name)
		}
	}
	if _, ok := handlers.Lookup(handler); ok {
		keys = append(keys, handler)
	}
	return keys
}

// priorityWeightMax is the largest weight of a priority level, the
// library's (worker.PriorityWeights); TestPriorityWeightMax holds the two
// together. It is checked here so that a problem names the level's key,
// where the library names the three weights at once.
const priorityWeightMax = 1000

// validateWeights checks each weight of a queue's priority_weights and
// reports whether all are in range.
func validateWeights(key string, w PriorityWeights, ps *problems) bool {
	ok := true
	for _, l := range []struct {
		name   string
		weight int
	}{{"high", w.High}, {"normal", w.Normal}, {"low", w.Low}} {
		if l.weight < 0 || l.weight > priorityWeightMax {
			ps.add(key+"."+l.name, "must be 0 to %d (got %d)", priorityWeightMax, l.weight)
			ok = false
		}
	}
	return ok
}

func validateBackoff(key string, b Backoff, ps *problems) {
	if b.Base <= 0 {
		ps.add(key+".base", "must be positive (got %s)", b.Base)
	}
	if b.Cap < b.Base {
		ps.add(key+".cap", "must be at least base (%s; got %s)", b.Base, b.Cap)
	}
	for i, s := range b.Steps {
		if s < 0 {
			ps.add(key+".steps["+strconv.Itoa(i)+"]", "must not be negative (got %s)", s)
		}
	}
}

func problemsOf(err error) problems {
	var e *Error
	if errors.As(err, &e) {
		return e.Problems
	}
	return problems{{Key: "", Message: err.Error()}}
}

// libraryKeys maps the Go fields the worker library names in its
// validation errors (worker.ValidationError.Field) to this configuration's
// keys: the one table between the two vocabularies. Queue options are
// relative to queues.<name>, a periodic schedule's to
// queues.<name>.periodic.<schedule> ("" is the schedule itself), a
// Durability's to queues.<name>.durability.
var libraryKeys = map[string]string{
	"Config.Prefix":           "redis.prefix",
	"Config.MaxPayloadBytes":  "jobs.max_payload_bytes",
	"Config.MaxScheduleAhead": "jobs.max_schedule_ahead",
	"Config.MaxResultBytes":   "jobs.max_result_bytes",
	"Config.Lease":            "lease.duration",
	"Config.ShutdownTimeout":  "shutdown.timeout",
	"Config.PollInterval":     "poll.interval",
	"Config.RecoverInterval":  "recover.interval",
	"Config.LeaderLease":      "leader.lease",
	"Config.DeadMaxJobs":      "dead.max_jobs",
	"Config.DeadMaxAge":       "dead.max_age",
	"Config.HistoryRetention": "history.retention",

	"QueueOptions.Concurrency":     "concurrency",
	"QueueOptions.MaxAttempts":     "max_attempts",
	"QueueOptions.Timeout":         "timeout",
	"QueueOptions.RateLimit":       "rate_limit",
	"QueueOptions.PriorityWeights": "priority_weights",
	"QueueOptions.IDRetention":     "id_retention",
	"QueueOptions.Partitions":      "partitions",
	"QueueOptions.KeyConcurrency":  "key_concurrency",
	"QueueOptions.KeyRateLimit":    "key_rate_limit",

	"QueueOptions.RetainCompleted.Count": "retain_completed.count",
	"QueueOptions.RetainCompleted.Age":   "retain_completed.age",

	// relative to queues.<name>.durability
	"Durability.Replicas": "replicas",
	"Durability.Timeout":  "timeout",
	"Durability.AOF":      "aof",

	"Periodic.":            "",
	"Periodic.Name":        "",
	"Periodic.Every":       ".every",
	"Periodic.Cron":        ".cron",
	"Periodic.MaxAttempts": ".max_attempts",
	"Periodic.Timeout":     ".timeout",
}

// periodicField matches the field of a periodic schedule's problem:
// Periodic[<index>] or Periodic[<index>].<Field>.
var periodicField = regexp.MustCompile(`^Periodic\[(\d+)\]\.?(\w*)$`)

// libraryProblems adds a problem for each validation error the library
// joined into err, under the key keyOf gives its field; a field keyOf does
// not know (false) is left out, and any other error is reported as is.
func libraryProblems(ps *problems, err error, keyOf func(field string) (string, bool)) {
	if err == nil {
		return
	}
	for _, e := range flatten(err) {
		var v *worker.ValidationError
		if !errors.As(e, &v) {
			ps.add("", "%v", e)
			continue
		}
		if key, ok := keyOf(v.Field); ok {
			ps.add(key, "%s", v.Reason)
		}
	}
}

// reason is the message of a worker.ValidationError without its field.
func reason(err error) string {
	var v *worker.ValidationError
	if errors.As(err, &v) {
		return v.Reason
	}
	return err.Error()
}

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("expected host:port (got " + strconv.Quote(addr) + ")")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errors.New("port " + strconv.Quote(port) + " is not a number from 0 to 65535")
	}
	_ = host // empty means every interface, which is allowed
	return nil
}

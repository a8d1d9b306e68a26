package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/handlers"
	"github.com/seed-53d105c9/courier/worker"
)

// validate adds a problem for every invalid value of a decoded configuration.
func (c *Config) validate(ps *problems) {
	c.validateRedis(ps)
	if err := checkHostPort(c.HTTP.Addr); err != nil {
		ps.add("http.addr", "%v", err)
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		ps.add("log.level", "must be debug, info, warn or error (got %q)", c.Log.Level)
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		ps.add("log.format", "must be text or json (got %q)", c.Log.Format)
	}
	if c.Shutdown.Timeout <= 0 {
		ps.add("shutdown.timeout", "must be positive (got %s)", c.Shutdown.Timeout)
	}
	// Ask the library about each of its fields alone, so that every bad
	// one is reported, not only the first.
	libraryFields := []struct {
		key string
		cfg worker.Config
	}{
		{"redis.prefix", worker.Config{Prefix: c.Redis.Prefix}},
		{"jobs.max_payload_bytes", worker.Config{MaxPayloadBytes: c.Jobs.MaxPayloadBytes}},
		{"jobs.max_schedule_ahead", worker.Config{MaxScheduleAhead: c.Jobs.MaxScheduleAhead}},
		{"lease.duration", worker.Config{Lease: c.Lease.Duration}},
		{"poll.interval", worker.Config{PollInterval: c.Poll.Interval}},
		{"recover.interval", worker.Config{RecoverInterval: c.Recover.Interval}},
		{"leader.lease", worker.Config{LeaderLease: c.Leader.Lease}},
		{"dead.max_age", worker.Config{DeadMaxAge: c.Dead.MaxAge}},
	}
	for _, f := range libraryFields {
		if err := f.cfg.Validate(); err != nil {
			ps.add(f.key, "%s", reason(err))
		}
	}
	if c.Dead.MaxJobs < 1 {
		ps.add("dead.max_jobs", "must be at least 1 (got %d)", c.Dead.MaxJobs)
	}
	c.Admin.validate(ps)
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
	type option struct {
		key  string
		opts worker.QueueOptions
	}
	options := []option{
		{"concurrency", worker.QueueOptions{Concurrency: q.Concurrency}},
		{"max_attempts", worker.QueueOptions{MaxAttempts: q.MaxAttempts}},
		{"timeout", worker.QueueOptions{Timeout: q.Timeout}},
	}
	if limit, err := parseRateLimit(q.RateLimit); err != nil {
		ps.add(key+".rate_limit", "%v", err)
	} else {
		options = append(options, option{"rate_limit", worker.QueueOptions{RateLimit: limit}})
	}
	for _, o := range options {
		if err := o.opts.Validate(); err != nil {
			ps.add(key+"."+o.key, "%s", reason(err))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(q.Periodic)) {
		p := q.Periodic[name].worker(name)
		err := worker.QueueOptions{Periodic: []worker.Periodic{p}}.Validate()
		var v *worker.ValidationError
		if errors.As(err, &v) {
			sub := strings.TrimPrefix(strings.TrimPrefix(v.Field, "periodic"), ".")
			k := key + ".periodic." + name
			if sub != "" && sub != "name" {
				k += "." + sub
			}
			ps.add(k, "%s", v.Reason)
		}
	}
	validateBackoff(key+".backoff", q.Backoff, ps)

	b, ok := handlers.Lookup(q.Handler)
	if q.Handler == "" {
		ps.add(key+".handler", "is required (built-in handlers: %s)", strings.Join(handlers.Names(), ", "))
	} else if !ok {
		ps.add(key+".handler", "unknown handler %q (built-in handlers: %s)", q.Handler, strings.Join(handlers.Names(), ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(q.Settings)) {
		switch {
		case k == q.Handler:
		case slices.Contains(handlers.Names(), k):
			ps.add(key+"."+k, "settings for handler %q, but the queue's handler is %q", k, q.Handler)
		default:
			ps.add(key+"."+k, "unknown key")
		}
	}
	if ok {
		if _, err := buildHandler(key, name, q, b, slog.New(slog.DiscardHandler)); err != nil {
			*ps = append(*ps, problemsOf(err)...)
		}
	}
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

// buildHandler builds the built-in handler b for queue name from the
// queue's section key+"."+b.Name.
func buildHandler(key, name string, q *Queue, b handlers.Builtin, logger *slog.Logger) (worker.Handler, error) {
	section := key + "." + b.Name
	decodeSettings := func(settings any) error {
		var ps problems
		decode(section, q.Settings[b.Name], valueOf(settings), &ps)
		return ps.err()
	}
	h, err := b.New(handlers.Env{Queue: name, Logger: logger}, decodeSettings)
	if err != nil {
		return nil, prefixProblems(section, err)
	}
	return h, nil
}

// prefixProblems turns a handler's "key: message" errors into problems
// under section; decode problems already carry their full key.
func prefixProblems(section string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ps problems
	for _, one := range flatten(err) {
		k, msg, ok := strings.Cut(one.Error(), ": ")
		if !ok || strings.ContainsAny(k, " \t") {
			ps.add(section, "%s", one.Error())
			continue
		}
		ps.add(section+"."+k, "%s", msg)
	}
	return ps.err()
}

// flatten undoes errors.Join.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

func problemsOf(err error) problems {
	var e *Error
	if errors.As(err, &e) {
		return e.Problems
	}
	return problems{{Key: "", Message: err.Error()}}
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

// Registry builds the handlers the configuration names, one per queue.
func (c *Config) Registry(logger *slog.Logger) (*worker.Registry, error) {
	reg := worker.NewRegistry()
	for _, name := range slices.Sorted(maps.Keys(c.Queues)) {
		q := c.Queues[name]
		key := "queues." + name
		b, ok := handlers.Lookup(q.Handler)
		if !ok {
			return nil, &Error{Problems: []Problem{{Key: key + ".handler", Message: "unknown handler " + strconv.Quote(q.Handler)}}}
		}
		h, err := buildHandler(key, name, &q, b, logger)
		if err != nil {
			return nil, err
		}
		if err := reg.Register(name, h, q.options()); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// options returns the library options of a validated queue.
func (q *Queue) options() worker.QueueOptions {
	var policy worker.RetryPolicy = worker.ExponentialBackoff{Base: q.Backoff.Base, Cap: q.Backoff.Cap}
	if len(q.Backoff.Steps) > 0 {
		policy = worker.FixedSteps(slices.Clone(q.Backoff.Steps))
	}
	limit, _ := parseRateLimit(q.RateLimit) // validated
	return worker.QueueOptions{
		Concurrency: q.Concurrency,
		MaxAttempts: q.MaxAttempts,
		Timeout:     q.Timeout,
		Backoff:     policy,
		RateLimit:   limit,
		Periodic:    q.periodic(),
	}
}

func (q *Queue) periodic() []worker.Periodic {
	var out []worker.Periodic
	for _, name := range slices.Sorted(maps.Keys(q.Periodic)) {
		out = append(out, q.Periodic[name].worker(name))
	}
	return out
}

// worker returns the library's form of the schedule called name.
func (p Periodic) worker(name string) worker.Periodic {
	return worker.Periodic{
		Name: name, Every: p.Every, Cron: p.Cron, Payload: []byte(p.Payload),
		MaxAttempts: p.MaxAttempts, Timeout: p.Timeout, SkipMissed: p.SkipMissed,
	}
}

// valueOf returns the struct a handler's settings pointer points to.
func valueOf(settings any) reflect.Value {
	v := reflect.ValueOf(settings)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: handler settings must be a pointer to a struct, not %T", settings))
	}
	return v.Elem()
}

package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/handlers"
	"github.com/seed-53d105c9/courier/worker"
)

// Registry builds the handlers the configuration names, one per queue.
// Its errors never show credentials (scrub.go).
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
			return nil, scrubbed(err)
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
	limit, _ := worker.ParseRateLimit(q.RateLimit)       // validated
	keyLimit, _ := worker.ParseRateLimit(q.KeyRateLimit) // validated
	return worker.QueueOptions{
		Concurrency:     q.Concurrency,
		MaxAttempts:     q.MaxAttempts,
		Timeout:         q.Timeout,
		Backoff:         policy,
		RateLimit:       limit,
		Periodic:        q.periodic(),
		PriorityWeights: worker.PriorityWeights(q.PriorityWeights),
		IDRetention:     q.IDRetention,
		Partitions:      q.Partitions,
		KeyConcurrency:  q.KeyConcurrency,
		KeyRateLimit:    keyLimit,
		RetainCompleted: worker.Retention(q.RetainCompleted),
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

// buildHandler builds the built-in handler b for queue name from the
// queue's section key+"."+b.Name. The handler's problems leave with every
// secret setting blanked out, in case its validation repeats one.
func buildHandler(key, name string, q *Queue, b handlers.Builtin, logger *slog.Logger) (worker.Handler, error) {
	section := key + "." + b.Name
	var secrets []string
	decodeSettings := settingsDecoder(section, q.Settings[b.Name], func(settings reflect.Value) {
		secretsOf(settings, false, &secrets)
	})
	h, err := b.New(handlers.Env{Queue: name, Logger: logger}, decodeSettings)
	if err != nil {
		return nil, redact(prefixProblems(section, err), secrets)
	}
	return h, nil
}

// settingsDecoder is the handlers.Decoder of a handler's section, whose
// merged value is raw: problems name keys under section. decoded sees the
// settings once they are decoded.
func settingsDecoder(section string, raw any, decoded func(settings reflect.Value)) handlers.Decoder {
	return func(settings any) error {
		var ps problems
		v := valueOf(settings)
		decode(section, raw, v, false, &ps)
		decoded(v)
		return ps.err()
	}
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

// valueOf returns the struct a handler's settings pointer points to.
func valueOf(settings any) reflect.Value {
	v := reflect.ValueOf(settings)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: handler settings must be a pointer to a struct, not %T", settings))
	}
	return v.Elem()
}

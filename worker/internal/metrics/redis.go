package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"
)

// Redis records the calls of the script layer (worker/internal/script):
// courier_redis_script_seconds by script name and courier_redis_errors_total
// by script name or lower-case command. A nil *Redis records nothing.
type Redis struct {
	script *prometheus.HistogramVec
	errors *prometheus.CounterVec
}

// NewRedis registers the Redis metrics on reg, sharing them when an earlier
// call registered them there.
func NewRedis(reg prometheus.Registerer) (*Redis, error) {
	r := &Redis{
		script: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "courier_redis_script_seconds",
			Help:    "Round-trip time of each call of a Lua script (one call of several in one pipelined round trip counts once).",
			Buckets: scriptBuckets,
		}, []string{"script"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_redis_errors_total",
			Help: "Redis calls that failed (error reply, network error or timeout), by script name or command.",
		}, []string{"op"}),
	}
	if err := register(reg, "Redis", share(&r.script), share(&r.errors)); err != nil {
		return nil, err
	}
	return r, nil
}

// Touch creates the series of scripts at zero, so that rates and alerts see
// them before the first call.
func (r *Redis) Touch(scripts ...string) {
	if r == nil {
		return
	}
	for _, name := range scripts {
		r.script.WithLabelValues(name)
		r.errors.WithLabelValues(name)
	}
}

// Script records one call of script: its time, and err when it failed.
func (r *Redis) Script(script string, took time.Duration, err error) {
	if r == nil {
		return
	}
	r.script.WithLabelValues(script).Observe(took.Seconds())
	r.Failed(script, err)
}

// Failed counts a call of op (a script name or a lower-case command) when
// err is a failure of Redis or of the way to it. A nil reply is an answer,
// and a cancelled context is the caller's decision: neither counts.
func (r *Redis) Failed(op string, err error) {
	if r == nil || err == nil || rueidis.IsRedisNil(err) || errors.Is(err, context.Canceled) {
		return
	}
	r.errors.WithLabelValues(op).Inc()
}

package metrics

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"
)

// Redis records the calls of the script layer (worker/internal/script):
// courier_redis_script_seconds by script name, courier_redis_errors_total
// by script name or lower-case command, and courier_redis_refused_total by
// those and the reason Redis gave. A nil *Redis records nothing.
type Redis struct {
	script  *prometheus.HistogramVec
	errors  *prometheus.CounterVec
	refused *prometheus.CounterVec
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
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_redis_refused_total",
			Help: "Redis replies that refused a call without running it (out of memory, loading, slot migrating, read-only replica, ...), by script name or command and reason; each refused attempt of a retried call counts.",
		}, []string{"op", "reason"}),
	}
	if err := register(reg, "Redis", share(&r.script), share(&r.errors), share(&r.refused)); err != nil {
		return nil, err
	}
	return r, nil
}

// Touch creates the series of scripts at zero, so that rates and alerts see
// them before the first call. Of the refusals, only reason oom gets a
// series at zero: the other reasons come in bursts of retried attempts,
// whose rate shows from the burst's second reply on.
func (r *Redis) Touch(scripts ...string) {
	if r == nil {
		return
	}
	for _, name := range scripts {
		r.script.WithLabelValues(name)
		r.errors.WithLabelValues(name)
		r.refused.WithLabelValues(name, RefusedOOM)
	}
}

// Refused counts a reply of op (a script name or a lower-case command)
// that refused the call: reason is Refusal of the reply's error. An empty
// reason counts nothing.
func (r *Redis) Refused(op, reason string) {
	if r == nil || reason == "" {
		return
	}
	r.refused.WithLabelValues(op, reason).Inc()
}

// The reasons of courier_redis_refused_total: the error replies by which
// Redis refuses a call before it runs (Refusal).
const (
	RefusedOOM         = "oom"         // OOM: used memory above maxmemory, policy noeviction
	RefusedReadOnly    = "readonly"    // READONLY: a write sent to a replica
	RefusedLoading     = "loading"     // LOADING: the server is loading its data set
	RefusedTryAgain    = "tryagain"    // TRYAGAIN: the keys' slot is migrating and some keys are on each side
	RefusedBusy        = "busy"        // BUSY: a script or function is running too long
	RefusedMasterDown  = "masterdown"  // MASTERDOWN: a replica that lost its master serves no stale data
	RefusedClusterDown = "clusterdown" // CLUSTERDOWN: the cluster does not serve the slot
	RefusedNoReplicas  = "noreplicas"  // NOREPLICAS: fewer replicas than min-replicas-to-write
	RefusedMisconf     = "misconf"     // MISCONF: writes stopped after a failed RDB save
)

// refusals maps the first word of an error reply to its reason.
var refusals = map[string]string{
	"OOM": RefusedOOM, "READONLY": RefusedReadOnly, "LOADING": RefusedLoading,
	"TRYAGAIN": RefusedTryAgain, "BUSY": RefusedBusy, "MASTERDOWN": RefusedMasterDown,
	"CLUSTERDOWN": RefusedClusterDown, "NOREPLICAS": RefusedNoReplicas, "MISCONF": RefusedMisconf,
}

// Refusal returns the reason label of err when err is (or wraps) an error
// reply by which Redis refused a call without running it, else "". The
// reply's first word decides: "BUSY" is a running script, while BUSYKEY
// and BUSYGROUP are answers about data and are not refusals.
func Refusal(err error) string {
	var re *rueidis.RedisError
	if !errors.As(err, &re) || re.IsNil() {
		return ""
	}
	word, _, _ := strings.Cut(re.Error(), " ")
	return refusals[word]
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

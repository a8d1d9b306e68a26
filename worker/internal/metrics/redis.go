package metrics

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/lua"
)

// OtherScript is the script label of a script that is not one of Courier's.
const OtherScript = "other"

type redisMetrics struct {
	script *prometheus.HistogramVec
	errors *prometheus.CounterVec
}

func newRedisMetrics() *redisMetrics {
	return &redisMetrics{
		script: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "courier_redis_script_seconds",
			Help:    "Round-trip time of the Redis calls that ran each Lua script (a pipelined batch counts once per script in it).",
			Buckets: scriptBuckets,
		}, []string{"script"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_redis_errors_total",
			Help: "Redis calls that failed (error reply, network error or timeout), by script name or command.",
		}, []string{"op"}),
	}
}

// scriptNames maps the SHA1 and the source of each of Courier's scripts to
// its name.
var scriptNames = func() map[string]string {
	m := make(map[string]string)
	for name, src := range lua.All() {
		sum := sha1.Sum([]byte(src))
		m[hex.EncodeToString(sum[:])] = name
		m[src] = name
	}
	return m
}()

// touchRedis creates the script series at zero.
func (r *redisMetrics) touch() {
	for name := range lua.All() {
		r.script.WithLabelValues(name)
		r.errors.WithLabelValues(name)
	}
}

// Redis returns c with every call timed (scripts) and every failure counted
// into courier_redis_script_seconds and courier_redis_errors_total. rueidis
// has no hooks; this wraps the client interface. A nil Set returns c.
func (s *Set) Redis(c rueidis.Client) rueidis.Client {
	if s == nil {
		return c
	}
	return &redisClient{Client: c, m: s.redis}
}

// redisClient instruments Do, DoMulti, DoCache, DoMultiCache and Receive,
// the calls Courier makes; the rest pass through.
type redisClient struct {
	rueidis.Client
	m *redisMetrics
}

// op names a command for the metrics: the script name for EVAL and
// EVALSHA, else the command in lower case. It must be read before the
// command is sent: rueidis recycles commands after.
func op(args []string) (name string, script bool) {
	if len(args) == 0 {
		return "unknown", false
	}
	switch cmd := strings.ToUpper(args[0]); cmd {
	case "EVALSHA", "EVALSHA_RO", "EVAL", "EVAL_RO":
		if len(args) > 1 {
			if n, ok := scriptNames[args[1]]; ok {
				return n, true
			}
		}
		return OtherScript, true
	default:
		return strings.ToLower(cmd), false
	}
}

// failed reports whether err is a failure of Redis or of the way to it: a
// nil reply is an answer, NOSCRIPT is answered by sending the script, and a
// cancelled context is the caller's decision.
func failed(err error) bool {
	return err != nil && !rueidis.IsRedisNil(err) && !errors.Is(err, context.Canceled) && !isNoScript(err)
}

func (c *redisClient) observe(name string, script bool, took time.Duration, err error) {
	if script && !isNoScript(err) {
		c.m.script.WithLabelValues(name).Observe(took.Seconds())
	}
	if failed(err) {
		c.m.errors.WithLabelValues(name).Inc()
	}
}

func isNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}

func (c *redisClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	name, script := op(cmd.Commands())
	start := time.Now()
	res := c.Client.Do(ctx, cmd)
	c.observe(name, script, time.Since(start), res.Error())
	return res
}

func (c *redisClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	ops := make([]namedOp, len(multi))
	for i, cmd := range multi {
		ops[i].name, ops[i].script = op(cmd.Commands())
	}
	start := time.Now()
	out := c.Client.DoMulti(ctx, multi...)
	c.observeMulti(ops, time.Since(start), out)
	return out
}

// namedOp is a command's op label, read before the command is sent.
type namedOp struct {
	name   string
	script bool
}

// observeMulti records a pipelined batch: its time once per script in it,
// and each failed call. A batch holds one or two scripts, so the scripts
// timed are kept in a slice.
func (c *redisClient) observeMulti(ops []namedOp, took time.Duration, out []rueidis.RedisResult) {
	var timed []string
	for i, res := range out {
		err := res.Error()
		if ops[i].script && !slices.Contains(timed, ops[i].name) && !isNoScript(err) {
			timed = append(timed, ops[i].name)
			c.m.script.WithLabelValues(ops[i].name).Observe(took.Seconds())
		}
		if failed(err) {
			c.m.errors.WithLabelValues(ops[i].name).Inc()
		}
	}
}

func (c *redisClient) DoCache(ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	name, script := op(cmd.Commands())
	start := time.Now()
	res := c.Client.DoCache(ctx, cmd, ttl)
	c.observe(name, script, time.Since(start), res.Error())
	return res
}

func (c *redisClient) DoMultiCache(ctx context.Context, multi ...rueidis.CacheableTTL) []rueidis.RedisResult {
	ops := make([]namedOp, len(multi))
	for i, ct := range multi {
		ops[i].name, ops[i].script = op(ct.Cmd.Commands())
	}
	start := time.Now()
	out := c.Client.DoMultiCache(ctx, multi...)
	c.observeMulti(ops, time.Since(start), out)
	return out
}

// Receive counts a subscription that ended with an error; its time is how
// long it listened, not a latency, so it is not timed.
func (c *redisClient) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(rueidis.PubSubMessage)) error {
	name, _ := op(subscribe.Commands())
	err := c.Client.Receive(ctx, subscribe, fn)
	if failed(err) && ctx.Err() == nil {
		c.m.errors.WithLabelValues(name).Inc()
	}
	return err
}

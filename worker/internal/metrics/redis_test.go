package metrics

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/lua"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestRedisClientCounts sends a known sequence of calls through the wrapped
// client of a real Redis and checks what was timed and counted.
func TestRedisClientCounts(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Redis(testkit.Single(t))
	ctx := t.Context()
	p := testkit.Prefix(t)

	// Plain commands: a nil reply is an answer, a wrong-type error counts.
	if err := c.Do(ctx, c.B().Set().Key(p+":s").Value("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, c.B().Get().Key(p+":missing").Build()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("GET missing: %v", err)
	}
	if err := c.Do(ctx, c.B().Incr().Key(p+":s").Build()).Error(); err == nil {
		t.Fatal("INCR of a string succeeded")
	}
	// A cancelled call is the caller's decision, not a Redis failure.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_ = c.Do(cancelled, c.B().Ping().Build())

	// Scripts: one lock_acquire call (a NOSCRIPT answer, if any, is not
	// timed: the EVAL that follows is), then a pipeline of two more and a
	// PING, timed once for the script; an unknown script is "other".
	acquire := rueidis.NewLuaScript(lua.LockAcquire)
	args := []string{"60000", "owner"}
	if err := acquire.Exec(ctx, c, []string{p + ":lock0"}, args).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("lock_acquire: %v", err)
	}
	var multi rueidis.Commands
	for i := 1; i <= 2; i++ {
		multi = append(multi, c.B().Evalsha().Sha1(sha1Of(lua.LockAcquire)).Numkeys(1).Key(p+":lock"+strconv.Itoa(i)).Arg(args...).Build())
	}
	multi = append(multi, c.B().Ping().Build())
	for i, res := range c.DoMulti(ctx, multi...) {
		if err := res.Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("pipeline call %d: %v", i, err)
		}
	}
	if err := c.Do(ctx, c.B().Eval().Script("return 1").Numkeys(0).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, c.B().Eval().Script("return redis.call('INCR', KEYS[1])").Numkeys(1).Key(p+":s").Build()).Error(); err == nil {
		t.Fatal("a failing script succeeded")
	}

	for op, want := range map[string]float64{"incr": 1, "get": 0, "ping": 0, OtherScript: 1, "lock_acquire": 0, "claim": 0} {
		if got := testutil.ToFloat64(s.redis.errors.WithLabelValues(op)); got != want {
			t.Errorf(`courier_redis_errors_total{op=%q} = %v, want %v`, op, got, want)
		}
	}
	for script, want := range map[string]uint64{"lock_acquire": 2, OtherScript: 2, "claim": 0} {
		if got := histogramCount(t, s.redis.script.WithLabelValues(script)); got != want {
			t.Errorf(`courier_redis_script_seconds_count{script=%q} = %v, want %v`, script, got, want)
		}
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("GatherAndLint: %v %+v", err, problems)
	}
}

func TestOpNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		name   string
		script bool
	}{
		{[]string{"EVALSHA", sha1Of(lua.Claim), "6"}, "claim", true},
		{[]string{"EVAL", lua.Recover, "6"}, "recover", true},
		{[]string{"EVALSHA_RO", sha1Of(lua.Get), "3"}, "get", true},
		{[]string{"EVAL", "return 1", "0"}, OtherScript, true},
		{[]string{"HSET", "k", "f", "v"}, "hset", false},
		{[]string{"SUBSCRIBE", "ch"}, "subscribe", false},
		{nil, "unknown", false},
	} {
		name, script := op(tc.args)
		if name != tc.name || script != tc.script {
			t.Errorf("op(%.20q) = %q, %v; want %q, %v", tc.args, name, script, tc.name, tc.script)
		}
	}
}

func sha1Of(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

func histogramCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	var m dto.Metric
	if err := o.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

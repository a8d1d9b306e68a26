package script

import (
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// loadingKeys is how many keys the LOADING test's server loads, each
// delayed by loadingDelayMicros: two seconds of LOADING in all.
const (
	loadingKeys        = "20000"
	loadingDelayMicros = "100"
)

// TestExecWaitsOutLoading restarts a Redis whose AOF takes seconds to load
// and claims while it loads: Redis answers LOADING, which rueidis resends
// only for retryable commands. The script layer resends it: the claim
// succeeds once the data set is loaded, and it ran once.
func TestExecWaitsOutLoading(t *testing.T) {
	t.Parallel()
	r := testkit.StartPrivate(t, "--appendonly", "yes")
	c, reg := meteredConn(t, r.Client(t))
	k := keysOf(testkit.Prefix(t), "q")
	enqueueRaw(t, c, k, "j1")
	r.MustDo(t, "DEBUG", "POPULATE", loadingKeys)
	// Everything goes into the AOF's RDB base, which key-load-delay slows.
	r.MustDo(t, "BGREWRITEAOF")
	testkit.Eventually(t, 30*time.Second, "the AOF rewrite to end", func() bool {
		info := r.MustDo(t, "INFO", "persistence")
		return strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0")
	})

	// loading-process-events-interval-bytes makes the loading server
	// answer clients every KiB instead of every 2 MiB.
	r.Restart(t, "--key-load-delay", loadingDelayMicros, "--loading-process-events-interval-bytes", "1024")
	if _, err := r.Do("PING"); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Fatalf("PING after the restart: %v, want LOADING: the test needs a server still loading", err)
	}
	// The restart broke the client's connection: a plain command makes a
	// new one (and is refused with LOADING), so that the claim below meets
	// the loading server, not a closed connection.
	_ = c.Do(t.Context(), c.B().Ping().Build())
	start := time.Now()
	vals, err := claimRaw(c, k, t, 10).ToArray()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("claim while Redis loads: %v", err)
	}
	if jobs := (len(vals) - 4) / 5; jobs != 1 {
		t.Errorf("the claim took %d jobs, want 1", jobs)
	}
	if seq, tok := r.MustDo(t, "HGET", k.claims, ""), claimToken(t, vals); seq != tok {
		t.Errorf("last claim token %s, want this claim's %s: the claim ran more than once", seq, tok)
	}
	loading := testkit.Metric(t, reg, "courier_redis_refused_total", "op", "claim", "reason", metrics.RefusedLoading)
	if loading < 1 {
		t.Errorf("courier_redis_refused_total{op=claim,reason=loading} = %v, want at least 1", loading)
	}
	t.Logf("the claim waited %s for the load, through %v LOADING replies", took.Round(time.Millisecond), loading)
}

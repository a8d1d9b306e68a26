package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests in this file run scenarios end to end: real redis-server
// processes, courier run daemons built from this module, the receiver and
// the producer. They are small: a few seconds of load each.

var (
	binOnce sync.Once
	binPath string
	errBin  error
)

// TestMain removes the courier binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// courierBin skips the test with -short and otherwise builds courier once
// per test binary.
func courierBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs redis-server and courier processes; run without -short")
	}
	for _, tool := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the chaos tests need %s on PATH (Debian: apt-get install redis-server redis-tools): %v", tool, err)
		}
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chaos-test-courier-")
		if err != nil {
			errBin = err
			return
		}
		binPath, errBin = BuildCourier(context.Background(), dir)
	})
	if errBin != nil {
		t.Fatal(errBin)
	}
	return binPath
}

// tinyPlan is a few seconds of load.
var tinyPlan = Plan{Load: 6 * time.Second, Rate: 40, Warmup: time.Second, Cooldown: time.Second,
	Drain: 15 * time.Second, Episodes: 1, Hold: time.Second}

// runTiny runs sc with tinyPlan and judges it; the logs go to the test's.
func runTiny(t *testing.T, sc *Scenario) Result {
	t.Helper()
	logf := func(format string, args ...any) { t.Logf(format, args...) }
	r := runScenario(t.Context(), sc, tinyPlan, courierBin(t), t.TempDir(), logf)
	r.judge(false)
	var b strings.Builder
	WriteTable(&b, []Result{r})
	t.Logf("\n%s", b.String())
	return r
}

// checkBooks checks what must hold of any run: every acknowledged job is
// delivered, dead or lost, and faults were injected.
func checkBooks(t *testing.T, r Result) {
	t.Helper()
	if r.Error != "" {
		t.Fatalf("scenario error: %s", r.Error)
	}
	if r.Jobs == 0 || len(r.Faults) == 0 {
		t.Fatalf("jobs %d, episodes %d: the scenario proved nothing", r.Jobs, len(r.Faults))
	}
	if r.Jobs != r.Delivered+r.Dead+r.Lost {
		t.Errorf("jobs %d != delivered %d + dead %d + lost %d", r.Jobs, r.Delivered, r.Dead, r.Lost)
	}
}

func TestRollingRestartEndToEnd(t *testing.T) {
	t.Parallel()
	r := runTiny(t, findScenario("daemon-sigterm"))
	checkBooks(t, r)
	if r.Delivered == 0 {
		t.Error("nothing was delivered")
	}
	for _, f := range r.Faults {
		if f.Kind != "SIGTERM restart" {
			t.Errorf("episode %+v is not a SIGTERM restart", f)
		}
	}
	t.Logf("verdict %s (the suite, not this test, holds Courier to it)", r.Verdict)
}

// TestSuiteReportsLoss runs a Redis without persistence under a backlog
// and kills it: the jobs waiting in it are gone, and the suite must count
// them lost, find them absent from Redis, and fail the scenario's promise.
func TestSuiteReportsLoss(t *testing.T) {
	t.Parallel()
	sc := &Scenario{
		Name: "test-loss", Fault: "daemons killed, then Redis without persistence killed",
		Topology: OnSingle, RedisArgs: []string{"--appendonly", "no"},
		Promise: Promise{Lost: Zero, Duplicates: Shown},
		Inject: func(ctx context.Context, w *world, _ Plan) error {
			return w.episodes(ctx, 1, 0, func(ctx context.Context, _ int) error {
				start := time.Now()
				for _, d := range w.daemons {
					d.Kill()
				}
				pause(ctx, time.Second) // a backlog builds up
				w.redis.Kill()
				if err := w.redis.Restart(ctx); err != nil {
					return err
				}
				for _, d := range w.daemons {
					if err := d.Start(); err != nil {
						return err
					}
				}
				w.fault(Fault{Kind: "kill -9", Target: "every daemon, then redis", Start: start, End: time.Now()})
				return nil
			})
		},
	}
	r := runTiny(t, sc)
	checkBooks(t, r)
	if r.Lost == 0 || r.Verdict != VerdictFail {
		t.Fatalf("lost %d, verdict %s: want the loss counted and the promise broken", r.Lost, r.Verdict)
	}
	if r.LostByState["absent"] != r.Lost {
		t.Errorf("lost by state %v: want every lost job absent from the emptied Redis", r.LostByState)
	}
	if want := fmt.Sprintf("%d acknowledged jobs lost", r.Lost); len(r.Broken) == 0 || r.Broken[0] != want {
		t.Errorf("broken %q, want %q", r.Broken, want)
	}
}

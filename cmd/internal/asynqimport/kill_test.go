package asynqimport

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// courierBinary builds cmd/courier once per test run.
func courierBinary(t *testing.T) string {
	t.Helper()
	return testkit.Build(t, "github.com/seed-53d105c9/courier/cmd/courier")
}

// killMidway starts courier import asynq from the asynq at addr into cs,
// and kills it with SIGKILL once Courier's import ledger of queue q holds
// at least after members.
func killMidway(t *testing.T, addr string, cs courierSide, q string, after int) {
	t.Helper()
	cmd := exec.Command(courierBinary(t), "import", "asynq", "--from", "redis://"+addr+"/0",
		"--redis", strings.Join(cs.addrs, ","), "--prefix", cs.cfg.Prefix, "--batch", "50", "--apply")
	var out testkit.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	parts, err := cs.admin.Partitions(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	// each partition's ledger: its jobs hash's name, the last word swapped
	var keys []string
	for i := range parts {
		jobs := rediskeys.PartitionKeys(cs.cfg.Prefix, q, parts, i).Jobs
		keys = append(keys, strings.TrimSuffix(jobs, "jobs")+"imported:asynq")
	}
	killed := testkit.WaitUntil(t, 2*time.Minute, func() bool {
		n := int64(0)
		for _, k := range keys {
			c, _ := cs.rdb.Do(t.Context(), cs.rdb.B().Scard().Key(k).Build()).AsInt64()
			n += c
		}
		return n >= int64(after)
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v (the import ended first? %s)", err, out.String())
	}
	err = <-done
	if !killed || err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the import was not killed midway (ledger reached %d: %v; exit %v); output:\n%s", after, killed, err, out.String())
	}
}

// TestImportAsynqKill9 kills a courier import asynq process midway and runs
// the import again: no task lost, none duplicated.
func TestImportAsynqKill9(t *testing.T) {
	t.Parallel()
	const q = "kill"
	backends(t, q, func(t *testing.T, cs courierSide) {
		a := testkit.StartPrivate(t)
		src := a.Client(t)
		s := seed(t, a.Addr, q, 2000)
		killMidway(t, a.Addr, cs, q, 300)
		sum := importOnce(t, src, cs, Options{Apply: true})
		_, moved, _, _ := tally(sum)
		m := 0
		for _, n := range moved {
			m += n
		}
		if m == 0 || m == s.total() {
			t.Errorf("the rerun moved %d of %d: the kill did not land midway", m, s.total())
		}
		if lost, dup := exactlyOnce(t, src, cs, q, s); lost != 0 || dup != 0 {
			t.Errorf("lost %d, duplicated %d", lost, dup)
		}
	})
}

package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// crashChildEnv, when set, makes the test binary a crash test's child: a
// daemon on the Redis at the addresses it holds ("addr,addr|prefix") whose
// handler says which job it runs and never returns.
const crashChildEnv = "COURIER_CRASH_CHILD"

const crashLease = 500 * time.Millisecond

func crashConfig(prefix string, log *slog.Logger) worker.Config {
	// The killed daemon led the queue: its leader lock must lapse before the
	// second daemon leads and recovers, so it is short too.
	return worker.Config{Prefix: prefix, Lease: crashLease, LeaderLease: time.Second, RecoverInterval: 100 * time.Millisecond, Logger: log}
}

// crashChild runs the child's daemon until it is killed.
func crashChild() int {
	addrs, prefix, _ := strings.Cut(os.Getenv(crashChildEnv), "|")
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: strings.Split(addrs, ",")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	var mu sync.Mutex
	reg := worker.NewRegistry()
	err = reg.Register("q", worker.HandlerFunc(func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		fmt.Printf("running %s\n", j.ID)
		mu.Unlock()
		select {} // a worker that hangs until the process dies
	}), worker.QueueOptions{Concurrency: 8})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	d, err := worker.NewDaemon(rdb, reg, crashConfig(prefix, slog.New(slog.NewTextHandler(os.Stderr, nil))))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	if err := d.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// TestDaemonProcessKilled runs a daemon in a child process, kills it with
// SIGKILL while it holds jobs, and checks that another daemon runs every job:
// the ones the dead process held once more, with the attempt it spent
// counted and the lease expiry as their last error.
func TestDaemonProcessKilled(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name  string
		addrs func(testing.TB) []string
		conn  func(testing.TB) rueidis.Client
	}{
		{"single", func(t testing.TB) []string { return []string{testkit.SingleAddr(t)} }, testkit.Single},
		{"cluster", testkit.ClusterAddrs, testkit.Cluster},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			prefix := testkit.Prefix(t)
			rdb := b.conn(t)
			cfg := crashConfig(prefix, testLogger(t))
			c := newClient(t, rdb, cfg)
			const n = 20
			ids := make([]string, n)
			for i := range ids {
				ids[i] = enqueue(t, c, worker.JobSpec{Queue: "q", ID: fmt.Sprintf("job-%02d", i)})
			}

			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(os.Environ(), crashChildEnv+"="+strings.Join(b.addrs(t), ",")+"|"+prefix)
			child.Stderr = t.Output()
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = child.Process.Kill() })
			// A child that never gets going is killed, which ends its output.
			watchdog := time.AfterFunc(30*time.Second, func() { _ = child.Process.Kill() })
			held := make(map[string]bool)
			lines := bufio.NewScanner(out)
			for len(held) < 8 && lines.Scan() {
				if id, ok := strings.CutPrefix(lines.Text(), "running "); ok {
					held[id] = true
				}
			}
			watchdog.Stop()
			if len(held) < 8 {
				t.Fatalf("the child ran %d jobs before its output ended, want 8", len(held))
			}
			if err := child.Process.Kill(); err != nil { // SIGKILL: no drain, no hand-back
				t.Fatal(err)
			}
			go io.Copy(io.Discard, out)
			_ = child.Wait()

			rec := newRecorder()
			startDaemon(t, rdb, register(t, nil, "q", rec.Handler(succeed), worker.QueueOptions{Concurrency: 8}), cfg)
			for _, id := range ids {
				calls := rec.WaitCalls(t, id, 1, 15*time.Second)
				wantAttempt := 1
				if held[id] {
					wantAttempt = 2
					if !strings.Contains(calls[0].LastError, "lease expired") {
						t.Errorf("job %s held by the dead process: last error %q, want the lease expiry", id, calls[0].LastError)
					}
				}
				if calls[0].Attempt != wantAttempt {
					t.Errorf("job %s ran as attempt %d, want %d", id, calls[0].Attempt, wantAttempt)
				}
			}
			testkit.Eventually(t, 10*time.Second, "every job to be acked", func() bool {
				st, err := c.Stats(t.Context(), "q")
				return err == nil && st == (admin.QueueStats{})
			})
			for _, id := range ids {
				if n := len(rec.Of(id)); n != 1 {
					t.Errorf("job %s ran %d times after the crash, want once", id, n)
				}
			}
		})
	}
}

package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/workertest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The handlers, unit-tested with the test kit: what they set, reported
// and returned, without Redis.
func TestResize(t *testing.T) {
	t.Parallel()
	out := workertest.Run(t, worker.JSONHandler(resize), workertest.JSON(t, Resize{Image: "cat.png", Width: 640}))
	if out.Outcome != workertest.Done || len(out.Progress) != 4 || out.Progress[3].Percent != 100 {
		t.Fatalf("outcome %s, progress %v, err %v", out.Outcome, out.Progress, out.Err)
	}
	if got := workertest.ResultJSON[map[string]string](t, out)["url"]; got != "https://cdn.example.com/640/cat.png" {
		t.Errorf("result url %q", got)
	}
}

// TestEnqueuedKinds: a typed producer stamps its type's kind, checked in
// one line on the in-memory store.
func TestEnqueuedKinds(t *testing.T) {
	t.Parallel()
	s := workertest.New(t)
	_, err := worker.NewProducer[Digest](s.Client(), "media").Enqueue(t.Context(), Digest{To: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := workertest.RequireEnqueued[Digest](t, s, workertest.Queue("media"), workertest.Kind("email.digest"))
	if d.To != "ada@example.com" {
		t.Errorf("digest to %q", d.To)
	}
}

// TestExampleApp builds the program as a user would, runs it against
// Redis until it has followed its job to the result, and stops it with
// SIGTERM.
func TestExampleApp(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts a process")
	}
	bin := testkit.Build(t, ".")
	prefix := testkit.Prefix(t)
	var stderr testkit.Buffer
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "REDIS_ADDR="+testkit.SingleAddr(t), "COURIER_PREFIX="+prefix)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	testkit.EventuallyState(t, 30*time.Second, func() (bool, string) {
		out := stderr.String()
		return strings.Contains(out, "done: {\"url\":\"https://cdn.example.com/640/cat.png\"}") &&
				strings.Contains(out, "% resizing cat.png") && strings.Contains(out, "digest sent to ada@example.com"),
			"the program did not follow its job to the result; stderr:\n" + out
	})
	ops, err := admin.NewClient(testkit.Single(t), worker.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ops.Stats(t.Context(), "media")
	if err != nil || st.Cancelled != 1 || st.Completed < 2 {
		t.Errorf("media: %+v, %v; want 1 cancelled job and both others completed", st, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("did not stop after SIGTERM")
	}
}

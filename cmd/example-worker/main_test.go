package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestExampleWorker builds the example as a user would, runs it against
// Redis, enqueues a good and a bad signup, and stops it with SIGTERM.
func TestExampleWorker(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts a process")
	}
	bin := testkit.Build(t, ".")
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	var stderr testkit.Buffer
	cmd := exec.Command(bin, "--redis", addr, "--prefix", prefix)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	client, err := worker.NewClient(testkit.Single(t), worker.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	good, err := client.Enqueue(t.Context(), worker.JobSpec{Queue: "signups", Payload: []byte(`{"email":"ada@example.com","name":"Ada"}`)})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := client.Enqueue(t.Context(), worker.JobSpec{Queue: "signups", Payload: []byte(`{"email":"nobody"}`)})
	if err != nil {
		t.Fatal(err)
	}
	testkit.EventuallyState(t, 20*time.Second, func() (bool, string) {
		j, err := client.Get(t.Context(), "signups", bad)
		return strings.Contains(stderr.String(), "job="+good) && err == nil && j.State == worker.StateDead,
			"jobs not handled; stderr:\n" + stderr.String()
	})
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

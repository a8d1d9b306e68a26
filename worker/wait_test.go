package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestWaitEmpty: WaitEmpty returns once a Daemon has run every job of the
// queue, and not while one runs; dead jobs do not hold it.
func TestWaitEmpty(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		release := make(chan struct{})
		reg := register(t, nil, "drain", worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			if string(job.Payload) == "bad" {
				return worker.Permanent(errors.New("bad job"))
			}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}), worker.QueueOptions{Concurrency: 2})
		c := newClient(t, rdb, testConfig(t, prefix))
		enqueue(t, c, worker.JobSpec{Queue: "drain", Payload: []byte("bad")})
		for range 5 {
			enqueue(t, c, worker.JobSpec{Queue: "drain"})
		}
		startDaemon(t, rdb, reg, testConfig(t, prefix))

		done := make(chan error, 1)
		go func() { done <- c.WaitEmpty(t.Context(), "drain") }()
		testkit.Eventually(t, 10*time.Second, "jobs running and the bad one dead", func() bool {
			s := stats(t, c, "drain")
			return s.Active == 2 && s.Dead == 1
		})
		select {
		case err := <-done:
			t.Fatalf("WaitEmpty returned %v while jobs run", err)
		default:
		}
		close(release)
		if err := receive(t, done, 10*time.Second, "WaitEmpty to return"); err != nil {
			t.Fatalf("WaitEmpty: %v", err)
		}
		if s := stats(t, c, "drain"); s.Scheduled+s.Ready+s.Active != 0 || s.Dead != 1 {
			t.Errorf("stats after WaitEmpty: %+v; want only the dead job", s)
		}
		// Only a dead job left: it returns at once.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := c.WaitEmpty(ctx, "drain"); err != nil {
			t.Errorf("WaitEmpty on a queue holding a dead job only: %v", err)
		}
	})
}

// TestWaitEmptyDeadline: with a job that will not run before ctx's
// deadline, WaitEmpty returns ctx's error and what the queue still held.
func TestWaitEmptyDeadline(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		enqueue(t, c, worker.JobSpec{Queue: "later", Delay: time.Hour})
		enqueue(t, c, worker.JobSpec{Queue: "later"})
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := c.WaitEmpty(ctx, "later")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 scheduled, 1 ready and 0 active jobs left") {
			t.Errorf("WaitEmpty = %v; want the deadline, with what was left", err)
		}
		if waited := time.Since(start); waited > 5*time.Second {
			t.Errorf("WaitEmpty returned %s after its deadline of 300ms", waited)
		}
		var ve *worker.ValidationError
		if err := c.WaitEmpty(t.Context(), "bad{name}"); !errors.As(err, &ve) {
			t.Errorf("WaitEmpty with a bad name: %v; want a *ValidationError", err)
		}
	})
}

package worker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestEnqueueReturnsTheIDOnARedisError: when Redis does not answer, Enqueue
// still returns the id it generated, so the producer can retry with it and
// never create a second job if the first call had landed.
func TestEnqueueReturnsTheIDOnARedisError(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t)
	rdb := p.Client(t)
	cfg := testConfig(t, testkit.Prefix(t))
	c := newClient(t, rdb, cfg)
	enqueue(t, c, worker.JobSpec{Queue: "q"}) // connected, the queue recorded
	p.Kill()
	id, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q"})
	if err == nil {
		t.Fatal("Enqueue with Redis down succeeded")
	}
	if id == "" {
		t.Fatalf("Enqueue returned no id with the error %v: the producer cannot retry with the same id", err)
	}
	if worker.ValidateID(id) != nil {
		t.Errorf("id %q is not a valid job id", id)
	}
	p.Restart(t)
	// The retry with that id: added now, or ErrDuplicate had the first
	// landed. The first call after the restart may still meet the old
	// connection's end (EOF): unavailable, so the producer tries again.
	testkit.Eventually(t, 10*time.Second, "the retry to be stored", func() bool {
		_, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", ID: id})
		if err != nil && !errors.Is(err, worker.ErrDuplicate) && !worker.IsRedisUnavailable(err) {
			t.Fatalf("retry with id %q: %v", id, err)
		}
		return err == nil || errors.Is(err, worker.ErrDuplicate)
	})
	if j := getJob(t, c, "q", id); j.ID != id {
		t.Errorf("job %q after the retry: %+v", id, j)
	}
}

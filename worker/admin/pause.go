package admin

import (
	"context"

	"github.com/seed-53d105c9/courier/worker"
)

// Pause pauses queue: no process claims its jobs until Resume. The pause
// is a flag stored in Redis in the queue's slot (rediskeys.Queue.Paused), which
// the claim script checks, so every process stops claiming the queue's
// jobs at once, with no message that could be missed. Jobs already
// running go on to their end (their acks, retries and lease renewals are
// stored as usual), and enqueueing goes on: new jobs wait in the queue.
// A queue may be paused before any job or process uses it. A queue of
// several partitions has the flag in each, set partition 0 first: when
// Pause returns nil every partition is paused, those a layout change adds
// meanwhile too, and Stats says so; a pause that failed half-way leaves
// some paused (Stats says the queue is not): call it again.
//
// Pause is idempotent: pausing a paused queue changes nothing and is no
// error. The pause lasts until Resume, across restarts of every process.
func (c *Client) Pause(ctx context.Context, queue string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	_, err := c.core.Layer.SetPaused(ctx, queue, true)
	return err
}

// Resume ends the pause of queue (see Pause): claims take its jobs again,
// and the resume wakes idle workers at once, so the jobs that waited start
// without waiting for a safety poll (worker.Config.PollInterval).
//
// Resume is idempotent: resuming a queue that is not paused changes
// nothing and is no error.
func (c *Client) Resume(ctx context.Context, queue string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	_, err := c.core.Layer.SetPaused(ctx, queue, false)
	return err
}

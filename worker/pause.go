package worker

import "context"

// Pause pauses queue: no process claims its jobs until Resume. The pause
// is a flag stored in Redis in the queue's slot (one of QueueKeys), which
// the claim script checks, so every process stops claiming the queue's
// jobs at once, with no message that could be missed. Jobs already
// running go on to their end (their acks, retries and lease renewals are
// stored as usual), and enqueueing goes on: new jobs wait in the queue.
// A queue may be paused before any job or process uses it. A queue of
// several partitions has the flag in each; a pause that failed half-way
// leaves some paused: call it again.
//
// Pause is idempotent: pausing a paused queue changes nothing and is no
// error. The pause lasts until Resume, across restarts of every process.
func (c *Client) Pause(ctx context.Context, queue string) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	// Partition 0 last: Stats reads its flag, so a pause it reports holds
	// on every partition.
	return c.eachPartition(ctx, queue, true, func(p string) error {
		_, err := c.st.Pause(ctx, p)
		return err
	})
}

// Resume ends the pause of queue (see Pause): claims take its jobs again,
// and the resume wakes idle workers at once, so the jobs that waited start
// without waiting for a safety poll (Config.PollInterval).
//
// Resume is idempotent: resuming a queue that is not paused changes
// nothing and is no error.
func (c *Client) Resume(ctx context.Context, queue string) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	return c.eachPartition(ctx, queue, false, func(p string) error {
		_, err := c.st.Resume(ctx, p)
		return err
	})
}

package worker

import (
	"context"
	"fmt"
	"time"
)

// The bounds of WaitEmpty's polling: the first look is at once, the next
// after waitEmptyFirst, each later one after twice the previous wait, at
// most waitEmptyMax.
const (
	waitEmptyFirst = 10 * time.Millisecond
	waitEmptyMax   = 500 * time.Millisecond
)

// WaitEmpty waits until queue holds no scheduled, ready or active job, and
// returns nil; or until ctx ends, and returns an error wrapping ctx's error
// that says what the queue still held. Dead jobs do not count: they wait
// for an operator, not for a worker (see Client.Dead).
//
// A job scheduled for later (a retry's backoff included) counts until it
// has run, and a paused queue's jobs count until it is resumed and they
// have run. A queue that is empty at one look may receive jobs right after:
// WaitEmpty tells when the work enqueued so far is done, for tests,
// deploys and scripts, not that no more will come.
//
// No message announces that a queue emptied, so WaitEmpty reads Stats: at
// once, then after 10 ms, doubling the wait each time up to one read every
// 500 ms. A Redis error ends the wait and is returned.
func (c *Client) WaitEmpty(ctx context.Context, queue string) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	wait := waitEmptyFirst
	timer := time.NewTimer(0)
	defer timer.Stop()
	var last QueueStats
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for queue %q to empty: %d scheduled, %d ready and %d active jobs left: %w",
				queue, last.Scheduled, last.Ready, last.Active, ctx.Err())
		case <-timer.C:
		}
		s, err := c.Stats(ctx, queue)
		if err != nil {
			if ctx.Err() != nil {
				continue // report the end of ctx, with the last counts
			}
			return fmt.Errorf("wait for queue %q to empty: %w", queue, err)
		}
		if s.Scheduled+s.Ready+s.Active == 0 {
			return nil
		}
		last = s
		timer.Reset(wait)
		wait = min(2*wait, waitEmptyMax)
	}
}

package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// The bounds of WaitEmpty's polling: the first look is at once, the next
// after waitEmptyFirst, each later one after twice the previous wait, at
// most waitEmptyMax.
const (
	waitEmptyFirst = 10 * time.Millisecond
	waitEmptyMax   = 500 * time.Millisecond
)

// WaitEmpty waits until queue holds no scheduled, ready or active job and
// returns nil, for tests, deploys and scripts: it tells when the work
// enqueued so far is done (a paused queue's jobs and retries scheduled
// later count until they have run; dead jobs do not), not that no more
// will come. When ctx ends first, the error wraps ctx's and says what the
// queue still held; a Redis error ends the wait. It polls the queue's
// counts: at once, then after 10 ms, doubling up to every 500 ms.
func (c *Client) WaitEmpty(ctx context.Context, queue string) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	wait := waitEmptyFirst
	timer := time.NewTimer(0)
	defer timer.Stop()
	var last store.Stats
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for queue %q to empty: %d scheduled, %d ready and %d active jobs left: %w",
				queue, last.Scheduled, last.Ready, last.Active, ctx.Err())
		case <-timer.C:
		}
		s, err := c.core.Stats(ctx, queue)
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

package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Cancel cancels a job: it goes to the queue's cancelled set
// (worker.StateCancelled), where it is kept, with its record, until the
// leader trims the set or an operator requeues or purges it (Triage with
// State worker.StateCancelled); its unique key is released. A job that
// had not started keeps its attempts and last error. A running one ends
// with its attempt spent and the last error "cancelled", and the handler
// running it, on whichever process of the fleet, sees its context end with
// cause worker.ErrCancelled — within milliseconds through the queue's wake
// channel, or at the process's next lease extension (worker.Config.Lease/3)
// if that message is lost; what the handler returns then is ignored.
// Cancelling a cancelled job does nothing and returns nil. It returns an
// error wrapping worker.ErrNotFound or worker.ErrJobDead (a dead job is
// left as it is) when there is nothing to cancel. A completed job (worker.QueueOptions.RetainCompleted) has finished, as
// a job its queue does not retain has: the error wraps worker.ErrNotFound, as it
// would for that one, says the job is completed, and the job is left as
// it is.
func (c *Client) Cancel(ctx context.Context, queue, id string) error {
	if err := validateRef(queue, id); err != nil {
		return err
	}
	var res store.CancelResult
	err := c.core.FindJob(ctx, queue, id, func(partition string) (bool, error) {
		var err error
		res, err = c.core.St.Cancel(ctx, partition, id)
		return err == nil && res != store.CancelNotFound, err
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch res {
	case store.Cancelled, store.CancelRunning, store.CancelAlready:
		return nil
	case store.CancelDead:
		return fmt.Errorf("cancel queue %q job %q: %w", queue, id, worker.ErrJobDead)
	case store.CancelCompleted:
		return fmt.Errorf("cancel queue %q job %q: the job is completed, nothing left to cancel: %w", queue, id, worker.ErrNotFound)
	}
	return fmt.Errorf("cancel queue %q job %q: %w", queue, id, worker.ErrNotFound)
}

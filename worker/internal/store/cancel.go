package store

import (
	"context"
	"fmt"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// CancelResult says what Cancel found.
type CancelResult int

// Cancel outcomes.
const (
	CancelNotFound CancelResult = iota // no such job
	Cancelled                          // deleted before it started
	CancelRunning                      // running: untouched
	CancelDead                         // in the dead set: untouched
)

// Cancel deletes a job of queue that has not started.
func (s *Store) Cancel(ctx context.Context, queue, id string) (CancelResult, error) {
	k := s.Keys(queue)
	n, err := script.Cancel.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.State}, []string{id}).AsInt64()
	if err != nil {
		return CancelNotFound, fmt.Errorf("cancel %s job %q: %w", queue, id, err)
	}
	switch n {
	case 1:
		return Cancelled, nil
	case -1:
		return CancelRunning, nil
	case -2:
		return CancelDead, nil
	}
	return CancelNotFound, nil
}

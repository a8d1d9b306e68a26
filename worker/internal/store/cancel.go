package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// CancelResult says what Cancel found.
type CancelResult int

// Cancel outcomes.
const (
	CancelNotFound  CancelResult = iota // no such job
	Cancelled                           // it had not started: now in the cancelled set
	CancelRunning                       // it was running: now in the cancelled set, its worker told
	CancelDead                          // in the dead set: untouched
	CancelCompleted                     // finished and retained (Complete): untouched
	CancelAlready                       // in the cancelled set already: untouched
)

// SetCancelled is the set of cancelled jobs (lua/cancel.lua): id → cancel
// time, ms.
const SetCancelled Set = "cancelled"

// Cancel moves a job of queue to its cancelled set, with its record, state
// and options entries, whether it had not started (its attempts and last
// error kept) or was running: then its last error is CancelledError, its
// claim dropped (the worker's late outcome is ignored), and the worker
// holding it is told on the queue's wake channel (Subscribe's onCancel),
// or at its next lease extension (Lost.Cancelled) if that message is lost.
// A dead, completed or cancelled job is left as it is.
func (s *Store) Cancel(ctx context.Context, queue, id string) (CancelResult, error) {
	k := s.Keys(queue)
	keys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.State, k.Claims, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Completed, k.Cancelled}
	keys = append(keys, k.keySet()...)
	n, err := script.Cancel.Exec(ctx, s.c, keys, []string{id, k.Wake}).AsInt64()
	if err != nil {
		return CancelNotFound, fmt.Errorf("cancel %s job %q: %w", queue, id, err)
	}
	switch n {
	case 1:
		return Cancelled, nil
	case 2:
		return CancelRunning, nil
	case -2:
		return CancelDead, nil
	case -3:
		return CancelCompleted, nil
	case -4:
		return CancelAlready, nil
	}
	return CancelNotFound, nil
}

// CancelledError is the last error of a job cancelled while it ran
// (lua/record.lua's CANCELLED); versions before the cancelled set left
// such a job in the dead set.
const CancelledError = "cancelled"

// cancelOf reads the wake channel's message for a running job that was
// cancelled (lua/cancel.lua): "cancel@<claim>:<id>", the run it ended,
// or "cancel:<id>" from a version that named no claim, whose Token has
// Claim 0 (any run of the id). ok is false for any other message.
func cancelOf(msg string) (tok Token, ok bool) {
	if id, ok := strings.CutPrefix(msg, "cancel:"); ok {
		return Token{ID: id}, true
	}
	rest, ok := strings.CutPrefix(msg, "cancel@")
	if !ok {
		return Token{}, false
	}
	claim, id, ok := strings.Cut(rest, ":")
	n, err := strconv.ParseInt(claim, 10, 64)
	if !ok || err != nil || n <= 0 {
		return Token{}, false
	}
	return Token{ID: id, Claim: n}, true
}

package store

import (
	"context"
	"fmt"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// PausedMessage is the message a pause publishes on the queue's wake
// channel (lua/pause.lua). Subscribe hands it to onWake as run-at 0, like
// any message that is not a time; a resume publishes the Redis clock in ms,
// a wake-up for jobs due now.
const PausedMessage = "paused"

// Pause pauses queue: from now on its claims take nothing and report
// Claimed.Paused, until Resume. Jobs already running go on and may be
// acked, extended, retried or snoozed; enqueued jobs wait. It reports
// whether the queue was running. A paused queue is never forgotten
// (ForgetQueues).
//
// Pause is safe to send again: when a reply is lost and the call is
// resent, the second run finds the queue paused and reports no change.
func (s *Store) Pause(ctx context.Context, queue string) (changed bool, err error) {
	return s.setPaused(ctx, queue, true)
}

// Resume lets queue's claims take jobs again and publishes a wake-up, so
// idle workers claim at once. It reports whether the queue was paused.
func (s *Store) Resume(ctx context.Context, queue string) (changed bool, err error) {
	return s.setPaused(ctx, queue, false)
}

// Paused reports whether queue is paused.
func (s *Store) Paused(ctx context.Context, queue string) (bool, error) {
	n, err := s.c.Do(ctx, s.c.B().Exists().Key(s.Keys(queue).Paused).Build()).AsInt64()
	if err != nil {
		return false, fmt.Errorf("paused %s: %w", queue, err)
	}
	return n == 1, nil
}

func (s *Store) setPaused(ctx context.Context, queue string, on bool) (bool, error) {
	op, arg := "resume", "0"
	if on {
		op, arg = "pause", "1"
	}
	k := s.Keys(queue)
	n, err := script.Pause.Exec(ctx, s.c, []string{k.Paused}, []string{arg, k.Wake}).AsInt64()
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", op, queue, err)
	}
	return n == 1, nil
}

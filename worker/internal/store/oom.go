package store

import (
	"errors"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// ErrOOM reports a call Redis refused because it is out of memory
// (maxmemory reached under noeviction): the refused call wrote nothing.
// An error that matches it reads as Redis's reply and keeps that reply in
// its chain.
var ErrOOM = errors.New("redis is out of memory")

// oomError is a Redis reply refusing a call for memory.
type oomError struct{ error }

func (e oomError) Unwrap() []error { return []error{ErrOOM, e.error} }

// markOOM returns err, made to match ErrOOM when it is Redis refusing the
// call for memory (metrics.Refusal classifies every refusal reply).
func markOOM(err error) error {
	if metrics.Refusal(err) == metrics.RefusedOOM {
		return oomError{err}
	}
	return err
}

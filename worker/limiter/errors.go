package limiter

import (
	"errors"
	"fmt"
)

// Sentinel errors; test with errors.Is. ErrSlotLost, ErrSlotExpired,
// ErrReleased and ErrClosed are also the causes (context.Cause) of a
// Slot's context when the slot ends.
var (
	// ErrInvalid reports a bad argument or option: an empty or malformed
	// name, a max or n below 1, a lease or window that is not positive.
	// The error names the argument and what is wrong with it; nothing was
	// written to Redis.
	ErrInvalid = errors.New("invalid")

	// ErrSlotLost reports that a slot is no longer held: Redis showed its
	// holder gone (its lease passed without a renewal, or the key was
	// deleted), so another caller may have taken it. Stop the work the
	// slot guarded. Extend and Release return it; it ends the Slot's
	// context.
	ErrSlotLost = errors.New("slot lost")

	// ErrSlotExpired ends a Slot's context when no renewal of its lease
	// was confirmed within the lease minus a safety margin (Redis
	// unreachable, too slow): Redis may free the slot soon after. It
	// wraps ErrSlotLost, so errors.Is(err, ErrSlotLost) holds for both.
	ErrSlotExpired = fmt.Errorf("%w: its lease ran out without a confirmed renewal", ErrSlotLost)

	// ErrReleased ends a Slot's context when Release is called on it, and
	// is returned by a second Release.
	ErrReleased = errors.New("slot released")

	// ErrClosed is returned by the Limiter's methods after Close and ends
	// the context of every slot it held (the slots are not released in
	// Redis: they free when their lease passes).
	ErrClosed = errors.New("limiter closed")
)

// invalid returns an ErrInvalid naming what is wrong.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w %s", ErrInvalid, fmt.Sprintf(format, args...))
}

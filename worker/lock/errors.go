package lock

import "errors"

// Sentinel errors; test with errors.Is. ErrLockLost, ErrLockExpired,
// ErrReleased and ErrClosed are also the causes (context.Cause) of a Held's
// context when its hold ends.
var (
	// ErrNotAcquired reports that Acquire's Wait elapsed while another
	// holder kept the lock.
	ErrNotAcquired = errors.New("lock held by another holder")

	// ErrNotHeld reports a Release by a holder that no longer holds the
	// lock: its hold ended before (lost, expired, closed, or this Held was
	// already released) or Redis no longer has its field. Nothing of
	// another holder was changed in Redis; what Redis still counted of a
	// hold that had ended here was given back (see Held.Release).
	ErrNotHeld = errors.New("lock not held")

	// ErrLockLost ends a hold when Redis showed the lock gone: a renewal or
	// release found the holder's field absent (the key was deleted, or it
	// expired and another holder took it).
	ErrLockLost = errors.New("lock lost")

	// ErrLockExpired ends a hold when no write of its lease was confirmed
	// within the lease minus a safety margin, counted from when that write
	// was sent (for example while Redis is unreachable, or at the end of a
	// fixed lease). Redis may let another process acquire the lock soon
	// after: the holder must stop acting as the owner.
	ErrLockExpired = errors.New("lock lease expired")

	// ErrReleased ends a Held's context when Release is called on it.
	ErrReleased = errors.New("lock released")

	// ErrClosed is returned by Acquire after Client.Close and ends every
	// hold of a closed Client (the locks are not released in Redis: they
	// expire after their lease).
	ErrClosed = errors.New("lock client closed")
)

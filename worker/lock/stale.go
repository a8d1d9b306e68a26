package lock

import (
	"context"
	"fmt"
	"time"
)

// maxGiveBack bounds the releases one give-back sends. Each stale hold is
// one lost reply (an acquire, a release) or one hold left by a closed
// Client with the same ID: more than a few means something else writes
// this Client's fields.
const maxGiveBack = 100

// staleKeep is how many leases a record of stale holds is kept after the
// last lease this process sent for them ran out. Redis has expired the
// holds by then unless writes reached it late (a stalled connection that
// delivers them once it recovers, a paused server); the last Release of a
// later hold still gives back what it finds.
const staleKeep = 10

// staleHold records that Redis may count holds of a field on a lock that
// no Held of this process stands for: its hold ended here without Redis
// confirming it gone (the lease ran out here first, a release got no
// answer or was not sent), or an acquire got no answer. The holds are this
// process's own — nobody else writes its fields — so they can be given
// back; left alone, a later Acquire by the holder would re-enter them,
// and its one Release would leave the lock counted, unannounced, until
// the lease ran out.
type staleHold struct {
	lease time.Duration // the lease a release sets while holds remain
	// until is when the last lease this process sent for the field runs
	// out; the record is forgotten staleKeep leases later.
	until time.Time
}

// markStale records that Redis may count holds of ref beyond this
// process's, after a write sent at sent that set lease, and forgets
// records staleKeep leases past their end. c.mu must be held.
func (c *Client) markStale(ref lockRef, lease time.Duration, sent time.Time) {
	now := time.Now()
	for r, s := range c.stale {
		if now.After(s.until.Add(staleKeep * s.lease)) {
			delete(c.stale, r)
		}
	}
	until := sent.Add(lease)
	if s, ok := c.stale[ref]; ok && s.until.After(until) {
		until = s.until
	}
	c.stale[ref] = staleHold{lease: lease, until: until}
}

// giveBackStale releases, one at a time, the holds Redis may still count
// for ref when no live hold of this process stands for them, until Redis
// says the field no longer holds the lock: the last release deletes the
// lock and publishes the unlock message, as the holder's own Release would
// have. A live hold's last Release gives back what Redis counts beyond it
// instead. It runs in ref's gate, so no acquire of ref is in flight.
func (c *Client) giveBackStale(ctx context.Context, ref lockRef) error {
	c.mu.Lock()
	s, ok := c.stale[ref]
	skip := !ok || c.holds[ref] != nil || c.closed // a closed Client leaves Redis alone
	c.mu.Unlock()
	if skip {
		return nil
	}
	given := 0
	for res := releaseDecremented; res == releaseDecremented; given++ {
		if given == maxGiveBack {
			return fmt.Errorf("give back the holds Redis still counts for %s: still held after %d releases", ref.field, given)
		}
		var err error
		if res, err = c.sendRelease(ctx, ref, s.lease); err != nil {
			return fmt.Errorf("give back the holds Redis may still count for %s: %w", ref.field, err)
		}
		if res == releaseNotHeld {
			break
		}
	}
	c.mu.Lock()
	delete(c.stale, ref)
	c.mu.Unlock()
	if given > 0 {
		c.log.Warn("lock: released stale holds Redis still counted for this process's field",
			"lock", ref.name, "field", ref.field, "holds", given)
	}
	return nil
}

package lock

import (
	"context"
	"time"
)

// watch is the Client's watchdog: every lease/3 it renews all holds in
// watchdog mode in one round trip, until Close. A renewal that finds the
// lock gone ends the hold at once (ErrLockLost); a renewal without an
// answer is tried again at the next tick, and the hold's own timer ends it
// (ErrLockExpired) if no renewal is confirmed before its deadline.
//
// Each round runs on its own, so the next one is sent on time whatever the
// last is doing, and waits for its answers as long as they can still move
// a deadline: a renewal that reached Redis but answers late (a loaded
// host, a slow Redis) still counts, rather than being taken for lost while
// Redis renewed the lock — a hold that then ended here while Redis kept it.
func (c *Client) watch() {
	defer c.wg.Done()
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			c.wg.Add(1) // while watch itself counts: never from zero
			go func() {
				defer c.wg.Done()
				c.renewAll()
			}()
		}
	}
}

// renewAll runs one round of renewals. It waits for the answers up to the
// lease minus the margin from its send: an answer after that would confirm
// a deadline already past. Rounds may overlap (at most about three, while
// Redis is slow); the latest confirmed send sets a hold's deadline.
func (c *Client) renewAll() {
	c.mu.Lock()
	sent := time.Now()
	var batch []*entry
	for _, e := range c.holds {
		if e.watchdog && !e.releasing {
			batch = append(batch, e)
			e.written = sent
		}
	}
	c.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	refs := make([]lockRef, len(batch))
	for i, e := range batch {
		refs[i] = e.ref
	}

	ctx, cancel := context.WithTimeout(c.ctx, c.lease-Margin(c.lease))
	results := c.b.renew(ctx, c.lease, refs)
	cancel()

	var lost []*entry
	var failed int
	var firstErr error
	c.mu.Lock()
	for i, e := range batch {
		r := results[i]
		switch {
		case r.err != nil:
			c.metrics.Renewal(e.label, "error")
			if firstErr == nil {
				firstErr = r.err
			}
			failed++
		case r.held:
			c.metrics.Renewal(e.label, "ok")
			c.confirm(e, sent, c.lease)
		case e.ended || e.releasing:
			// Released (or ending) while the renewal was in flight: the
			// key is gone because this process deleted it.
		default:
			c.metrics.Renewal(e.label, "lost")
			c.end(e, ErrLockLost)
			lost = append(lost, e)
		}
	}
	c.mu.Unlock()

	for _, e := range lost {
		c.log.Warn("lock: renewal found the lock gone; the hold ends", "lock", e.ref.name, "field", e.ref.field)
	}
	if failed > 0 && c.ctx.Err() == nil {
		c.log.Warn("lock: a round of renewals got no answer; the next rounds go on", "locks", failed, "err", firstErr)
	}
}

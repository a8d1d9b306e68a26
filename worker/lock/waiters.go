package lock

import (
	"context"
	"slices"
	"time"
)

// Subscription retry after it broke: doubling from the first to the last.
const (
	resubscribeFirst = 50 * time.Millisecond
	resubscribeMax   = 5 * time.Second
)

// group is this process's subscription to one lock's unlock channel, shared
// by every Acquire waiting for that lock. One goroutine (follow) owns the
// subscription while the group has waiters.
type group struct {
	channel string
	waiters []*waiter // in arrival order: unlock messages wake the oldest first
	live    bool      // the subscription is confirmed: no unlock can be missed
	stop    context.CancelFunc
}

// waiter is one waiting Acquire. A wake-up is kept until taken, so one that
// arrives while the waiter is busy with an attempt is not lost.
type waiter struct {
	g    *group
	wake chan struct{}
}

// poke wakes w unless a wake-up is already pending; it reports whether it
// did.
func (w *waiter) poke() bool {
	select {
	case w.wake <- struct{}{}:
		return true
	default:
		return false
	}
}

// join adds a waiter for lock name, starting the group's subscription if it
// is the first. The waiter is woken as soon as the subscription is live
// (at once if it already is), so that its next attempt happens when no
// unlock can be missed any more. It returns false after Close.
func (c *Client) join(name string) (*waiter, bool) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	if c.subClosed {
		return nil, false
	}
	g := c.groups[name]
	if g == nil {
		g = &group{channel: Channel(name)}
		c.groups[name] = g
		c.wg.Add(1)
		go c.follow(name, g)
	}
	w := &waiter{g: g, wake: make(chan struct{}, 1)}
	g.waiters = append(g.waiters, w)
	if g.live {
		w.poke()
	}
	return w, true
}

// leave removes w. A waiter that leaves without the lock wakes the next
// one: it may have taken an unlock meant for the others (pending, or
// consumed by an attempt that failed or was cut short), and a spare attempt
// costs one round trip. The last waiter to leave stops the subscription.
func (c *Client) leave(w *waiter, acquired bool) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	g := w.g
	g.waiters = slices.DeleteFunc(g.waiters, func(x *waiter) bool { return x == w })
	select {
	case <-w.wake:
	default:
	}
	if !acquired {
		g.wakeOne()
	}
	if len(g.waiters) == 0 && g.stop != nil {
		// Not live from now on: a waiter joining before follow has
		// unsubscribed must wait for the next subscription's confirmation.
		g.live = false
		g.stop()
		g.stop = nil
	}
}

// wakeOne wakes the oldest waiter that has no wake-up pending. c.subMu must
// be held.
func (g *group) wakeOne() {
	for _, w := range g.waiters {
		if w.poke() {
			return
		}
	}
}

// follow keeps the group subscribed while it has waiters, resubscribing
// after a break, and removes it when the last waiter has left.
func (c *Client) follow(name string, g *group) {
	defer c.wg.Done()
	backoff := time.Duration(0)
	for {
		c.subMu.Lock()
		if len(g.waiters) == 0 || c.ctx.Err() != nil {
			delete(c.groups, name)
			c.subMu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(c.ctx)
		g.stop = cancel
		c.subMu.Unlock()

		err := c.b.subscribe(ctx, g.channel, func() { c.subscribed(ctx, g) }, func() { c.unlocked(g) })
		stopped := ctx.Err() != nil
		cancel()

		c.subMu.Lock()
		wasLive := g.live
		g.live, g.stop = false, nil
		c.subMu.Unlock()
		if stopped {
			backoff = 0
			continue // by leave or Close: the loop's head decides
		}
		// Broken: waiters fall back on TTL sleeps until the next
		// subscription is live, which wakes them all.
		if wasLive {
			backoff = 0
		}
		backoff = min(max(2*backoff, resubscribeFirst), resubscribeMax)
		c.log.Warn("lock: unlock subscription broke; waiters wait for lock TTLs until it is back",
			"lock", name, "err", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
		}
	}
}

// subscribed runs when g's subscription under ctx is (re)established:
// unlocks sent before were not heard, so every waiter tries again.
func (c *Client) subscribed(ctx context.Context, g *group) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	if ctx.Err() != nil {
		return // a confirmation that arrived after leave stopped it
	}
	g.live = true
	for _, w := range g.waiters {
		w.poke()
	}
}

// unlocked runs on an unlock message: the lock became free, and one waiter
// of this process tries to take it (each process's oldest waiter competes).
// If it fails, the new holder's release will wake the next.
func (c *Client) unlocked(g *group) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	g.wakeOne()
}

package limiter

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

// group is this process's subscription to one limit's free channel, shared
// by every Acquire waiting for that limit. One goroutine (follow) owns the
// subscription while the group has waiters.
type group struct {
	channel string
	waiters []*waiter // in arrival order: a release wakes the oldest first
	live    bool      // the subscription is confirmed: no release can be missed
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

// join adds a waiter for the limit name, starting the group's subscription
// if it is the first. The waiter is woken as soon as the subscription is
// live (at once if it already is), so that its next attempt happens when
// no release can be missed any more. It returns false after Close.
func (l *Limiter) join(name string) (*waiter, bool) {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	if l.subClosed {
		return nil, false
	}
	g := l.groups[name]
	if g == nil {
		g = &group{channel: l.channel(name)}
		l.groups[name] = g
		l.wg.Add(1) // under subMu, before Close's Wait
		go l.follow(name, g)
	}
	w := &waiter{g: g, wake: make(chan struct{}, 1)}
	g.waiters = append(g.waiters, w)
	if g.live {
		w.poke()
	}
	return w, true
}

// leave removes w. A waiter that leaves without a slot wakes the next one:
// it may have taken a wake-up meant for the others, and a spare attempt
// costs one round trip. The last waiter to leave stops the subscription.
func (l *Limiter) leave(w *waiter, acquired bool) {
	l.subMu.Lock()
	defer l.subMu.Unlock()
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

// wakeOne wakes the oldest waiter that has no wake-up pending. l.subMu
// must be held.
func (g *group) wakeOne() {
	for _, w := range g.waiters {
		if w.poke() {
			return
		}
	}
}

// follow keeps the group subscribed while it has waiters, resubscribing
// after a break, and removes it when the last waiter has left.
func (l *Limiter) follow(name string, g *group) {
	defer l.wg.Done()
	backoff := time.Duration(0)
	for {
		l.subMu.Lock()
		if len(g.waiters) == 0 || l.ctx.Err() != nil {
			delete(l.groups, name)
			l.subMu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(l.ctx)
		g.stop = cancel
		l.subMu.Unlock()

		err := l.b.subscribe(ctx, g.channel, func() { l.subscribed(ctx, g) }, func() { l.freed(g) })
		stopped := ctx.Err() != nil
		cancel()

		l.subMu.Lock()
		wasLive := g.live
		g.live, g.stop = false, nil
		l.subMu.Unlock()
		if stopped {
			backoff = 0
			continue // by leave or Close: the loop's head decides
		}
		// Broken: waiters fall back on lease sleeps until the next
		// subscription is live, which wakes them all.
		if wasLive {
			backoff = 0
		}
		backoff = min(max(2*backoff, resubscribeFirst), resubscribeMax)
		l.log.Warn("limiter: free-slot subscription broke; waiters wait for leases until it is back",
			"limit", name, "err", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-l.ctx.Done():
			t.Stop()
		}
	}
}

// subscribed runs when g's subscription under ctx is (re)established:
// releases sent before were not heard, so every waiter tries again.
func (l *Limiter) subscribed(ctx context.Context, g *group) {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	if ctx.Err() != nil {
		return // a confirmation that arrived after leave stopped it
	}
	g.live = true
	for _, w := range g.waiters {
		w.poke()
	}
}

// freed runs on a message on the free channel: a slot was released, and
// one waiter of this process tries to take it (each process's oldest
// waiter competes). If it fails, the next release wakes the next.
func (l *Limiter) freed(g *group) {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	g.wakeOne()
}

// Package wakeup keeps a process's waiters for named resources that free
// up (a lock's unlock, a limiter's released slot) woken by a pub/sub
// channel: package worker/lock and package worker/limiter share it. One
// subscription per name, shared by every waiter of the name, lives while
// the name has waiters; a message wakes the oldest waiter that has no
// wake-up pending, and a confirmed (re)subscription wakes them all, since
// messages sent while it was down were not heard.
package wakeup

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Subscription retry after it broke: doubling from the first to the last.
const (
	resubscribeFirst = 50 * time.Millisecond
	resubscribeMax   = 5 * time.Second
)

// Subscribe listens on channel until ctx ends or the subscription breaks
// (an error): onLive runs when the subscription is confirmed, onMessage on
// each message.
type Subscribe func(ctx context.Context, channel string, onLive, onMessage func()) error

// Broke is told that the subscription of name broke with err, and is tried
// again after retry (the owner logs it).
type Broke func(name string, err error, retry time.Duration)

// Set is the waiters of one owner (a lock Client, a Limiter), by name.
type Set struct {
	ctx   context.Context // the owner's lifetime: ends every subscription
	wg    *sync.WaitGroup // the owner's: counts the subscriptions' goroutines
	sub   Subscribe
	broke Broke

	mu     sync.Mutex // guards groups and closed
	groups map[string]*group
	closed bool // set by Close: Join starts no more subscriptions
}

// New returns an empty Set whose subscriptions live until ctx ends, each
// counted in wg.
func New(ctx context.Context, wg *sync.WaitGroup, sub Subscribe, broke Broke) *Set {
	return &Set{ctx: ctx, wg: wg, sub: sub, broke: broke, groups: make(map[string]*group)}
}

// group is this process's subscription to one name's channel, shared by
// every waiter of that name. One goroutine (follow) owns the subscription
// while the group has waiters.
type group struct {
	channel string
	waiters []*Waiter // in arrival order: a message wakes the oldest first
	live    bool      // the subscription is confirmed: no message can be missed
	stop    context.CancelFunc
}

// Waiter is one waiting caller. A wake-up is kept until taken, so one that
// arrives while the waiter is busy with an attempt is not lost.
type Waiter struct {
	g    *group
	wake chan struct{}
}

// C is the waiter's wake-up: try again when it fires.
func (w *Waiter) C() <-chan struct{} { return w.wake }

// poke wakes w unless a wake-up is already pending; it reports whether it
// did.
func (w *Waiter) poke() bool {
	select {
	case w.wake <- struct{}{}:
		return true
	default:
		return false
	}
}

// Join adds a waiter for name, whose messages come on channel, starting
// the name's subscription if it is the first. The waiter is woken as soon
// as the subscription is live (at once if it already is), so that its
// next attempt happens when no message can be missed any more. It returns
// false after Close.
func (s *Set) Join(name, channel string) (*Waiter, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	g := s.groups[name]
	if g == nil {
		g = &group{channel: channel}
		s.groups[name] = g
		s.wg.Add(1) // under mu, before Close's Wait
		go s.follow(name, g)
	}
	w := &Waiter{g: g, wake: make(chan struct{}, 1)}
	g.waiters = append(g.waiters, w)
	if g.live {
		w.poke()
	}
	return w, true
}

// Leave removes w. A waiter that leaves without what it waited for (got
// false) wakes the next one: it may have taken a wake-up meant for the
// others (pending, or consumed by an attempt that failed or was cut
// short), and a spare attempt costs one round trip. The last waiter to
// leave stops the subscription.
func (s *Set) Leave(w *Waiter, got bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := w.g
	g.waiters = slices.DeleteFunc(g.waiters, func(x *Waiter) bool { return x == w })
	select {
	case <-w.wake:
	default:
	}
	if !got {
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

// Close makes Join refuse from now on; the subscriptions end with the
// owner's context (its wg counts them).
func (s *Set) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// wakeOne wakes the oldest waiter that has no wake-up pending. The Set's
// mu must be held.
func (g *group) wakeOne() {
	for _, w := range g.waiters {
		if w.poke() {
			return
		}
	}
}

// follow keeps the group subscribed while it has waiters, resubscribing
// after a break, and removes it when the last waiter has left.
func (s *Set) follow(name string, g *group) {
	defer s.wg.Done()
	backoff := time.Duration(0)
	for {
		s.mu.Lock()
		if len(g.waiters) == 0 || s.ctx.Err() != nil {
			delete(s.groups, name)
			s.mu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(s.ctx)
		g.stop = cancel
		s.mu.Unlock()

		err := s.sub(ctx, g.channel, func() { s.subscribed(ctx, g) }, func() { s.message(g) })
		stopped := ctx.Err() != nil
		cancel()

		s.mu.Lock()
		wasLive := g.live
		g.live, g.stop = false, nil
		s.mu.Unlock()
		if stopped {
			backoff = 0
			continue // by Leave or the owner's end: the loop's head decides
		}
		// Broken: waiters fall back on their own timers until the next
		// subscription is live, which wakes them all.
		if wasLive {
			backoff = 0
		}
		backoff = min(max(2*backoff, resubscribeFirst), resubscribeMax)
		s.broke(name, err, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
		}
	}
}

// subscribed runs when g's subscription under ctx is (re)established:
// messages sent before were not heard, so every waiter tries again.
func (s *Set) subscribed(ctx context.Context, g *group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return // a confirmation that arrived after Leave stopped it
	}
	g.live = true
	for _, w := range g.waiters {
		w.poke()
	}
}

// message runs on a message: the resource freed up, and one waiter of this
// process tries to take it (each process's oldest waiter competes). If it
// fails, the next message wakes the next.
func (s *Set) message(g *group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g.wakeOne()
}

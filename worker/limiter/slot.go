package limiter

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// marginMin is the smallest safety margin between a slot's local deadline
// and its deadline in Redis; see margin.
const marginMin = 50 * time.Millisecond

// margin is how long before Redis may free a slot its Slot ends here
// (ErrSlotExpired): lease/10, at least marginMin, at most lease/2. The
// lease is counted from when the write that set it was sent, so the Slot
// ends before Redis lets another caller in, given clocks that run at the
// same rate.
func margin(lease time.Duration) time.Duration {
	return min(max(lease/10, marginMin), lease/2)
}

// Slot is one held slot of a concurrency limit, from Acquire to Release.
// The Limiter's watchdog renews its lease every lease/3 while it is held;
// its Context ends when it is released or lost. A Slot is safe for
// concurrent use.
type Slot struct {
	l       *Limiter
	name    string
	key     string
	channel string
	holder  string
	ctx     context.Context
	cancel  context.CancelCauseFunc
	reset   chan struct{} // Extend changed the lease: the watchdog re-times its next renewal
	done    chan struct{} // closed when the slot ends: the watchdog stops

	mu       sync.Mutex
	lease    time.Duration // what the watchdog renews with
	sent     time.Time     // when the last confirmed write of the lease was sent
	deadline time.Time     // sent + its lease - margin: the slot ends here then
	timer    *time.Timer   // ends the slot at deadline unless confirmed again
	ended    bool
	released bool
}

// newSlot records a slot taken by an acquire sent at sent with lease and
// starts its watchdog. It returns ErrClosed, having released nothing,
// after Close.
func (l *Limiter) newSlot(ctx context.Context, name, holder string, lease time.Duration, sent time.Time) (*Slot, error) {
	s := &Slot{
		l: l, name: name, key: l.slotsKey(name), channel: l.channel(name), holder: holder,
		reset: make(chan struct{}, 1), done: make(chan struct{}), lease: lease,
	}
	s.ctx, s.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	l.slots[s] = struct{}{}
	s.confirm(sent, lease)
	l.wg.Add(1) // under l.mu, before Close's Wait
	go s.watch()
	return s, nil
}

// Name returns the limit's name.
func (s *Slot) Name() string { return s.name }

// Holder returns the slot's holder as Redis records it, "<ID>:<n>": the
// member of the limit's slots key.
func (s *Slot) Holder() string { return s.holder }

// Context returns a context that is cancelled when the slot ends, with
// context.Cause telling why: ErrReleased after Release, ErrSlotLost when
// Redis showed the slot gone, ErrSlotExpired when no renewal was confirmed
// in time, ErrClosed after Limiter.Close. Run the work the slot guards
// under it. It carries the values of the context given to Acquire, not its
// cancellation: watch your own context too.
func (s *Slot) Context() context.Context { return s.ctx }

// Release gives the slot back: it is free in Redis at once, and a waiter
// of the limit (in any process) is woken to take it. The slot's context
// ends with ErrReleased.
//
// Release returns an error wrapping ErrSlotLost (or ErrSlotExpired, or
// ErrClosed) when the slot had ended before: the work ran past the slot,
// and another caller may have had it meanwhile. What Redis still held of
// it is freed all the same. A second Release returns ErrReleased. When the
// call fails (ctx ended, network), the slot is no longer renewed and frees
// when its lease passes. In a defer, pass a context that is still live,
// such as context.WithoutCancel(ctx).
func (s *Slot) Release(ctx context.Context) error {
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return fmt.Errorf("limiter: release slot of %s: %w", s.name, ErrReleased)
	}
	s.released = true
	ended, cause, lease := s.ended, context.Cause(s.ctx), s.lease
	gone := s.endLocked(ErrReleased)
	s.mu.Unlock()
	if gone {
		s.l.forget(s)
	}

	ctx, cancel := context.WithTimeout(ctx, lease) // after the lease it is free anyway
	defer cancel()
	ok, err := s.l.b.release(ctx, s.key, s.channel, s.holder)
	switch {
	case err != nil:
		return fmt.Errorf("limiter: release slot of %s: %w", s.name, err)
	case ended:
		return fmt.Errorf("limiter: release slot of %s: %w", s.name, cause)
	case !ok:
		return fmt.Errorf("limiter: release slot of %s: %w (its lease had passed in Redis)", s.name, ErrSlotLost)
	}
	return nil
}

// Extend renews the slot's lease now, to lease from now (LeaseMin to
// LeaseMax, whole milliseconds), and the watchdog renews it with lease from
// then on (every lease/3). It returns an error wrapping ErrSlotLost when
// the slot is no longer held (its context ends), ErrReleased after
// Release; any other error (network, ctx) leaves the slot to the
// watchdog.
func (s *Slot) Extend(ctx context.Context, lease time.Duration) error {
	lease, err := validateLease(lease)
	if err != nil {
		return fmt.Errorf("limiter: extend slot of %s: %w", s.name, err)
	}
	s.mu.Lock()
	switch {
	case s.released:
		s.mu.Unlock()
		return fmt.Errorf("limiter: extend slot of %s: %w", s.name, ErrReleased)
	case s.ended:
		s.mu.Unlock()
		return fmt.Errorf("limiter: extend slot of %s: %w", s.name, context.Cause(s.ctx))
	}
	s.lease = lease
	s.mu.Unlock()
	select {
	case s.reset <- struct{}{}:
	default: // one pending re-timing will do
	}

	sent := time.Now()
	ctx, cancel := context.WithTimeout(ctx, lease)
	defer cancel()
	ok, err := s.l.b.extend(ctx, s.key, s.holder, lease)
	if err != nil {
		return fmt.Errorf("limiter: extend slot of %s: %w", s.name, err)
	}
	if !ok {
		s.end(ErrSlotLost)
		return fmt.Errorf("limiter: extend slot of %s: %w", s.name, context.Cause(s.ctx))
	}
	s.confirm(sent, lease)
	if s.ctx.Err() != nil { // ended meanwhile: a renewal found it gone, or Release
		return fmt.Errorf("limiter: extend slot of %s: %w", s.name, context.Cause(s.ctx))
	}
	return nil
}

// watch is the slot's watchdog: every lease/3 it renews the lease, each
// renewal on its own so that the next is sent on time whatever the last
// one is doing. A renewal that finds the slot gone ends it (ErrSlotLost);
// one without an answer is tried again at the next tick, and the slot's
// timer ends it (ErrSlotExpired) if none is confirmed before its deadline.
func (s *Slot) watch() {
	defer s.l.wg.Done()
	t := time.NewTimer(s.interval())
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-s.l.ctx.Done():
			return
		case <-s.reset:
			t.Reset(s.interval())
		case <-t.C:
			s.mu.Lock()
			lease := s.lease
			s.mu.Unlock()
			sent := time.Now()
			s.l.wg.Add(1) // while watch itself counts: never from zero
			go func() {
				defer s.l.wg.Done()
				s.renew(sent, lease)
			}()
			t.Reset(lease / 3)
		}
	}
}

// interval is the time between renewals: a third of the lease.
func (s *Slot) interval() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease / 3
}

// renew sends one renewal, sent at sent, and waits for its answer as long
// as it can still move the deadline.
func (s *Slot) renew(sent time.Time, lease time.Duration) {
	ctx, cancel := context.WithTimeout(s.l.ctx, lease-margin(lease))
	ok, err := s.l.b.extend(ctx, s.key, s.holder, lease)
	cancel()
	switch {
	case err != nil:
		if s.ctx.Err() == nil && s.l.ctx.Err() == nil {
			s.l.log.Warn("limiter: a slot's renewal got no answer; the next one goes on", "limit", s.name, "holder", s.holder, "err", err)
		}
	case ok:
		s.confirm(sent, lease)
	default:
		if s.ctx.Err() == nil {
			s.l.log.Warn("limiter: a renewal found the slot gone; the slot ends", "limit", s.name, "holder", s.holder)
		}
		s.end(ErrSlotLost)
	}
}

// confirm moves the deadline after a confirmed write sent at sent that set
// lease. Writes are confirmed out of order at times; the latest sent wins,
// since it set the deadline in Redis last.
func (s *Slot) confirm(sent time.Time, lease time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || sent.Before(s.sent) {
		return
	}
	s.sent = sent
	s.deadline = sent.Add(lease - margin(lease))
	d := time.Until(s.deadline)
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.expire)
		return
	}
	s.timer.Reset(d)
}

// expire ends the slot when its deadline has passed without a later
// confirmation.
func (s *Slot) expire() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	if d := time.Until(s.deadline); d > 0 { // confirmed again while the timer fired
		s.timer.Reset(d)
		s.mu.Unlock()
		return
	}
	since := time.Since(s.sent)
	s.endLocked(ErrSlotExpired)
	s.mu.Unlock()
	s.l.forget(s)
	s.l.log.Warn("limiter: no renewal of a slot confirmed within its lease minus the margin; the slot ends",
		"limit", s.name, "holder", s.holder, "since_last_confirmed_send", since)
}

// end ends the slot with cause, once: its watchdog stops, its context
// ends.
func (s *Slot) end(cause error) {
	s.mu.Lock()
	gone := s.endLocked(cause)
	s.mu.Unlock()
	if gone {
		s.l.forget(s)
	}
}

// endLocked ends the slot with cause unless it has ended, and reports
// whether it did; the caller then calls forget. s.mu must be held, so that
// whoever sees ended sees the cause too.
func (s *Slot) endLocked(cause error) bool {
	if s.ended {
		return false
	}
	s.ended = true
	if s.timer != nil {
		s.timer.Stop()
	}
	close(s.done)
	s.cancel(cause)
	return true
}

// forget drops an ended slot from the Limiter's.
func (l *Limiter) forget(s *Slot) {
	l.mu.Lock()
	delete(l.slots, s)
	l.mu.Unlock()
}

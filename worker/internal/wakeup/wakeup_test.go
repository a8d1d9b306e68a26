package wakeup

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeSub is a Subscribe whose subscriptions the test drives: each call
// reports its live and message callbacks, and ends when its ctx does or
// the test breaks it.
type fakeSub struct {
	subs chan sub
}

type sub struct {
	live, msg func()
	brk       chan error
}

func (f *fakeSub) subscribe(ctx context.Context, _ string, onLive, onMessage func()) error {
	s := sub{live: onLive, msg: onMessage, brk: make(chan error, 1)}
	f.subs <- s
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.brk:
		return err
	}
}

func woken(w *Waiter) bool {
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("nothing received in 5s")
	}
	panic("unreachable")
}

func TestWaitersWakeInOrder(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	f := &fakeSub{subs: make(chan sub, 4)}
	broke := make(chan error, 4)
	s := New(ctx, &wg, f.subscribe, func(_ string, err error, _ time.Duration) { broke <- err })

	a, ok := s.Join("x", "ch:x")
	if !ok {
		t.Fatal("Join refused before Close")
	}
	b, _ := s.Join("x", "ch:x")
	sb := recv(t, f.subs) // one subscription for the name, whatever its waiters
	if woken(a) || woken(b) {
		t.Fatal("a waiter was woken before its subscription was live")
	}
	sb.live()
	if !woken(a) || !woken(b) {
		t.Fatal("a live subscription must wake every waiter: messages before it were not heard")
	}
	sb.msg()
	if !woken(a) || woken(b) {
		t.Fatal("a message must wake the oldest waiter only")
	}
	s.Leave(a, false) // a leaves without the resource: b tries instead
	if !woken(b) {
		t.Fatal("a waiter that leaves empty-handed must wake the next")
	}

	sb.brk <- errors.New("connection reset")
	if err := recv(t, broke); err == nil {
		t.Fatal("Broke got no error")
	}
	sb2 := recv(t, f.subs) // resubscribed after the backoff
	sb2.live()
	if !woken(b) {
		t.Fatal("a resubscription must wake the waiters")
	}
	s.Leave(b, true)

	s.Close()
	if _, ok := s.Join("y", "ch:y"); ok {
		t.Fatal("Join accepted a waiter after Close")
	}
	cancel()
	wg.Wait() // every subscription's goroutine ended with the owner's context
}

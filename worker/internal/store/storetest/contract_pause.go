package storetest

import (
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// testPause: a paused queue's claims take nothing and say so, jobs enqueued
// meanwhile wait, other queues go on; pausing or resuming twice changes
// nothing the second time; a change is announced on the wake channel (the
// pause as run-at 0, the resume at the clock), and after the resume the
// next claim takes the due jobs.
func testPause(k *kit) {
	t := k.t
	wakes := k.subscribe()
	k.enqueue(store.NewJob{ID: "a"})
	a := k.get("a")
	sameTime(t, "wake-up for a", k.nextWake(wakes), a.Score)

	if p := k.paused(); p {
		t.Fatalf("a new queue is paused")
	}
	if !k.pause(true) {
		t.Fatalf("Pause of a running queue reported no change")
	}
	if k.pause(true) {
		t.Errorf("a second Pause reported a change")
	}
	if !k.paused() {
		t.Fatalf("Paused = false after Pause")
	}
	if at := k.nextWake(wakes); at.UnixMilli() != 0 {
		t.Errorf("the pause announced run-at %d, want 0 (not a time)", at.UnixMilli())
	}

	c := k.claim(10, long)
	if !c.Paused || len(c.Jobs) != 0 || !c.Next.IsZero() || c.Limited {
		t.Fatalf("claim while paused = %+v, want nothing, paused, no next", c)
	}
	if c.Now.Before(a.Now) {
		t.Errorf("claim while paused: Now %v before %v", c.Now, a.Now)
	}
	limited := k.claimFrom(q, 10, long, store.Rate{N: 1, Per: time.Minute})
	if !limited.Paused || len(limited.Jobs) != 0 || limited.Limited {
		t.Fatalf("limited claim while paused = %+v, want nothing, paused", limited)
	}
	// A job enqueued while paused waits (its wake-up still goes out).
	k.enqueue(store.NewJob{ID: "b", At: a.Score.Add(-time.Second)})
	sameTime(t, "wake-up for b", k.nextWake(wakes), a.Score.Add(-time.Second))
	if c := k.claim(10, long); !c.Paused || len(c.Jobs) != 0 {
		t.Fatalf("claim while paused = %+v, want nothing, paused", c)
	}
	k.is("a", facts{Set: store.SetDue})
	k.is("b", facts{Set: store.SetDue})
	// Another queue is not paused.
	k.enqueueTo(other, store.NewJob{ID: "x"})
	if c := k.claimFrom(other, 10, long, store.Rate{}); c.Paused || !slices.Equal(ids(c.Jobs), []string{"x"}) {
		t.Errorf("claim of another queue = %+v, want x, not paused", c)
	}

	before := k.get("a").Now
	if !k.pause(false) {
		t.Fatalf("Resume of a paused queue reported no change")
	}
	after := k.get("a").Now
	if k.pause(false) {
		t.Errorf("a second Resume reported a change")
	}
	if k.paused() {
		t.Fatalf("Paused = true after Resume")
	}
	within(t, "the resume's wake-up", k.nextWake(wakes), ms(before), after)

	c = k.claim(10, long)
	if c.Paused || !slices.Equal(ids(c.Jobs), []string{"b", "a"}) {
		t.Fatalf("claim after the resume = %+v, want [b a], not paused", c)
	}
	for _, r := range c.Jobs {
		claimed(t, r, r.ID, 1, "")
	}
}

// testPauseRunning: jobs running when their queue is paused go on: their
// leases are extended, they are acked, and one handed back (snooze) waits
// like the rest until the resume.
func testPauseRunning(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "a"}, store.NewJob{ID: "b"}, store.NewJob{ID: "c"})
	c := k.claim(2, long)
	if got := ids(c.Jobs); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("claim took %v, want [a b]", got)
	}
	a, b := c.Jobs[0], c.Jobs[1]
	if !k.pause(true) {
		t.Fatalf("Pause reported no change")
	}

	if lost := k.extend(map[string][]store.Token{q: {a.Token(), b.Token()}}, 2*long); len(lost) != 0 {
		t.Errorf("Extend while paused lost %v", lost)
	}
	snap := k.is("a", facts{Set: store.SetActive, Claim: a.Claim, Attempt: 1})
	within(t, "a's extended lease", snap.Score, ms(c.Now).Add(2*long), snap.Now.Add(2*long))
	if n := k.ack(b.Token()); n != 1 {
		t.Errorf("Ack while paused = %d, want 1", n)
	}
	k.gone("b")
	if n := k.snooze(0, a.Token()); n != 1 {
		t.Errorf("Snooze while paused = %d, want 1", n)
	}
	if got := k.claim(10, long); !got.Paused || len(got.Jobs) != 0 {
		t.Fatalf("claim while paused = %+v, want nothing, paused", got)
	}
	k.is("a", facts{Set: store.SetDue, Attempt: 0})

	if !k.pause(false) {
		t.Fatalf("Resume reported no change")
	}
	if got := ids(k.claim(10, long).Jobs); len(got) != 2 || !slices.Contains(got, "a") || !slices.Contains(got, "c") {
		t.Errorf("claim after the resume took %v, want a and c", got)
	}
}

package storetest

import (
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// testLeaseLost: when a lease runs out, the leader's Recover returns the job
// to due now with the attempt spent; the old token is stale, and the next
// claim gets a new one. A job with a live lease is left alone.
func testLeaseLost(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "held"})
	held := k.claimOne(long)
	k.enqueue(store.NewJob{ID: "j", Payload: []byte("p")})
	lost := k.claimOne(shortLease)
	if lost.ID != "j" {
		t.Fatalf("claimed %s, want j", lost.ID)
	}
	heldBefore := k.get(held.ID)

	before := k.waitExpired("j")
	if got := k.recover(3); got != (store.Recovered{Due: 1}) {
		t.Fatalf("Recover = %+v, want 1 due", got)
	}
	const lastErr = "lease expired: the worker running attempt 1 stopped responding"
	snap := k.is("j", facts{Set: store.SetDue, Attempt: 1, LastError: lastErr, Payload: "p"})
	within(t, "the recovered run-at", snap.Score, before, snap.Now)
	k.unchanged(held.ID, heldBefore)

	touchStale(k, lost)
	k.is("j", facts{Set: store.SetDue, Attempt: 1, LastError: lastErr, Payload: "p"})
	again := k.claimOne(long)
	claimed(t, again, "j", 2, lastErr)
	if again.Claim == lost.Claim {
		t.Errorf("the claim after recovery reused token %d", lost.Claim)
	}
	if got := k.recover(3); got != (store.Recovered{}) {
		t.Errorf("second Recover = %+v, want nothing", got)
	}
}

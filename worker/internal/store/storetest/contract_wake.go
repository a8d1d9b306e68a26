package storetest

import (
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// testWake: a write that makes a job the earliest due one (enqueue, retry,
// snooze, requeue, recover) announces its run-at; one that does not stays
// silent. Messages of one queue arrive in
// order, so each silent write is proved silent by the message after it.
func testWake(k *kit) {
	t := k.t
	wakes := k.subscribe()

	k.enqueue(store.NewJob{ID: "head", Delay: long})
	sameTime(t, "wake-up for the first job", k.nextWake(wakes), k.get("head").Score)
	k.enqueue(store.NewJob{ID: "after-head", Delay: 2 * long})
	if added, err := k.b.Enqueue(k.ctx(), q, []store.NewJob{{ID: "head"}}); err != nil || added[0] {
		t.Fatalf("Enqueue of an existing id = %v, %v", added, err)
	}
	k.enqueue(store.NewJob{ID: "now"})
	sameTime(t, "wake-up for the job due now", k.nextWake(wakes), k.get("now").Score)

	// Retry sooner than the head.
	r := k.claimOne(long)
	before := k.get("now").Now
	if !k.retry(r.Token(), 0, "e") {
		t.Fatalf("Retry did not move the job")
	}
	within(t, "wake-up for the retry", k.nextWake(wakes), before, k.get("now").Now)

	// Snooze later than the head (silent), then a requeue now.
	r = k.claimOne(long)
	if n := k.snooze(3*long, r.Token()); n != 1 {
		t.Fatalf("Snooze = %d, want 1", n)
	}
	k.enqueue(store.NewJob{ID: "dies"})
	sameTime(t, "wake-up for the job due now", k.nextWake(wakes), k.get("dies").Score)
	r = k.claimOne(long)
	if !k.kill(r.Token(), "e") {
		t.Fatalf("Kill did not move the job")
	}
	before = k.get("dies").Now
	if moved := k.requeue("dies"); !moved[0] {
		t.Fatalf("Requeue did not move the job")
	}
	within(t, "wake-up for the requeue", k.nextWake(wakes), before, k.get("dies").Now)

	// Snooze sooner than the head.
	r = k.claimOne(long)
	before = k.get("dies").Now
	if n := k.snooze(0, r.Token()); n != 1 {
		t.Fatalf("Snooze = %d, want 1", n)
	}
	within(t, "wake-up for the snooze", k.nextWake(wakes), before, k.get("dies").Now)

	// Recover of an expired lease.
	k.claimOne(shortLease)
	before = k.waitExpired("dies")
	if got := k.recover(3); got != (store.Recovered{Due: 1}) {
		t.Fatalf("Recover = %+v, want 1 due", got)
	}
	within(t, "wake-up for the recovery", k.nextWake(wakes), before, k.get("dies").Now)
}

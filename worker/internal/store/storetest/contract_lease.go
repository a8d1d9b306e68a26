package storetest

import (
	"math"
	"strings"

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

// testBadReport: a progress report that breaks the rule (store.Normal) is
// dropped and the lease renewed all the same; the call does not fail. A
// percent of -0 is stored as 0.
func testBadReport(k *kit) {
	t := k.t
	k.enqueue(store.NewJob{ID: "a"})
	a := k.claimOne(shortLease)
	report := func(p store.Progress) {
		t.Helper()
		before := k.get("a").Now
		lost, err := k.b.Extend(k.ctx(), map[string][]store.Renewal{q: {{Token: a.Token(), Progress: &p}}}, long)
		if err != nil || len(lost[q]) != 0 {
			t.Fatalf("Extend with %+v: lost %v, %v; want the lease renewed", p, lost, err)
		}
		snap := k.get("a")
		within(t, "the renewed lease", snap.Score, before.Add(long), snap.Now.Add(long))
	}
	report(store.Progress{Percent: math.Copysign(0, -1), Message: "zero"})
	if p := k.get("a").Record.Progress; p == nil || p.Percent != 0 || math.Signbit(p.Percent) || p.Message != "zero" {
		t.Fatalf("progress after -0%%: %+v, want 0%% \"zero\"", p)
	}
	for _, bad := range []store.Progress{
		{Percent: math.NaN()}, {Percent: math.Inf(1)}, {Percent: -1}, {Percent: 100.0000001},
		{Percent: 5, Message: "a\nb"}, {Percent: 5, Message: strings.Repeat("x", store.MaxReportBytes)},
	} {
		report(bad)
		if p := k.get("a").Record.Progress; p == nil || p.Percent != 0 || p.Message != "zero" {
			t.Errorf("progress after the bad report %+v: %+v, want the last good one kept", bad, p)
		}
	}
}

package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// TestClaimTokensSurviveRollback: Redis loses its recent writes, as after a
// crash under appendfsync everysec, a failover to a replica that lagged, or
// a restore: SAVE, then DEBUG RELOAD NOSAVE reloads that snapshot. The
// queue's token sequence rolls back with the jobs, yet the job claimed again
// gets a token never handed out before, so the worker that held the lost
// claim is harmless: its lease extension reports the lease lost and its ack
// is stale, while the job's new holder runs it to the end.
func TestClaimTokensSurviveRollback(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t)
	c := p.Client(t)
	s := store.New(c, testkit.Prefix(t), nil)
	ctx := t.Context()

	enqueue(t, s, job("j", "p"))
	first := claimOne(t, s, time.Hour) // so that the sequence holds a token
	if n, err := s.Snooze(ctx, queue, []store.Token{first.Token()}, 0); n != 1 || err != nil {
		t.Fatalf("Snooze = %d, %v; want 1", n, err)
	}
	p.MustDo(t, "SAVE")
	lost := claimOne(t, s, time.Hour) // worker A's claim, about to be lost
	p.MustDo(t, "DEBUG", "RELOAD", "NOSAVE")
	if snap := get(t, s, "j"); snap.Set != store.SetDue {
		t.Fatalf("after the reload j is %s, want due: the snapshot was taken before the claim", snap.Set)
	}

	again := claimOne(t, s, time.Hour) // worker B
	if again.Token() == lost.Token() || again.Token() == first.Token() {
		t.Fatalf("the (id, token) pair %v was handed out twice: before the reload %v and %v", again.Token(), first.Token(), lost.Token())
	}
	lostLeases, err := s.Extend(ctx, storetest.Renewals(map[string][]store.Token{queue: {lost.Token(), again.Token()}}), time.Hour)
	if err != nil || !slices.Equal(lostLeases[queue], []store.Lost{{Token: lost.Token()}}) {
		t.Errorf("Extend(A, B) lost %v, %v; want A's lease lost, B's renewed", lostLeases, err)
	}
	if n, err := s.Ack(ctx, queue, []store.Token{lost.Token()}); n != 0 || err != nil {
		t.Errorf("A's Ack = %d, %v; want 0: its token is stale", n, err)
	}
	if snap := get(t, s, "j"); snap.Set != store.SetActive || snap.Record.Claim != again.Claim {
		t.Errorf("j after A's calls = %s under claim %d, want active under B's claim %d", snap.Set, snap.Record.Claim, again.Claim)
	}
	if n, err := s.Ack(ctx, queue, []store.Token{again.Token()}); n != 1 || err != nil {
		t.Errorf("B's Ack = %d, %v; want 1", n, err)
	}
}

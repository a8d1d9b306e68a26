package carrier

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// graceQueues is the queue of the renewal-round tests.
var graceQueues = []Queue{{Name: testQueue, MaxAttempts: 3}}

// claimTwo enqueues and claims the jobs "renewed" and "abandoned" with a
// lease of lease, and returns the token of "renewed".
func claimTwo(t *testing.T, st *store.Store, lease time.Duration) store.Token {
	t.Helper()
	ctx := t.Context()
	if _, err := st.Enqueue(ctx, testQueue, []store.NewJob{{ID: "renewed"}, {ID: "abandoned"}}); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	c, err := st.Claim(ctx, testQueue, 10, lease)
	if err != nil || len(c.Jobs) != 2 {
		t.Fatalf("Claim = %+v, %v; want 2 jobs", c, err)
	}
	i := slices.IndexFunc(c.Jobs, func(r store.Record) bool { return r.ID == "renewed" })
	return c.Jobs[i].Token()
}

// renewWithin has the holder of tok renew its lease in the middle of the
// leader's grace, as its next renewal round would, trying again while
// Redis does not answer yet, and fails the test when the leader had
// recovered the job by then.
func renewWithin(t *testing.T, st *store.Store, tok store.Token, grace time.Duration) {
	t.Helper()
	<-time.After(grace / 2)
	var lost map[string][]store.Lost
	var err error
	testkit.Eventually(t, grace/4, "a renewal that Redis answers", func() bool {
		lost, err = st.Extend(t.Context(), map[string][]store.Renewal{testQueue: {{Token: tok}}}, time.Minute)
		return err == nil
	})
	if len(lost[testQueue]) != 0 {
		t.Fatalf("the leader recovered %s before its holder's renewal round (%v into a grace of %v)", tok.ID, grace/2, grace)
	}
}

// abandonedIsRecovered waits until the job nobody renewed is back in due,
// and checks that the renewed one is still held.
func abandonedIsRecovered(t *testing.T, st *store.Store) {
	t.Helper()
	get := func(id string) store.Snapshot {
		t.Helper()
		s, err := st.Get(t.Context(), testQueue, id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		return s
	}
	testkit.Eventually(t, 10*time.Second, "the abandoned job recovered", func() bool {
		return get("abandoned").Set == store.SetDue
	})
	if s := get("renewed").Set; s != store.SetActive {
		t.Errorf("renewed job in %v, want still active", s)
	}
}

// TestRecoverWaitsARenewalRoundAfterAnOutage: Redis restarts, down for
// longer than the jobs' lease, so their leases end while their holder
// cannot renew them, and the leader's recover calls fail. Once Redis is
// back the leader must give the holder RenewGrace to renew before it
// recovers; the lease nobody renews is recovered after that.
func TestRecoverWaitsARenewalRoundAfterAnOutage(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	r := testkit.StartPrivate(t, "--appendonly", "yes", "--appendfsync", "always")
	const grace = 2 * time.Second
	// A leader lease far longer than the outage: the same process leads
	// before and after it.
	n := startNodeLease(t, r.Client(t), prefix, "a", graceQueues,
		Config{RecoverInterval: 20 * time.Millisecond, RenewGrace: grace}, time.Minute)
	waitLeader(t, n)
	holder := store.New(r.Client(t), prefix, nil)
	renewed := claimTwo(t, holder, 300*time.Millisecond)

	r.Kill()
	<-time.After(time.Second) // the leases end, the leader's calls fail
	r.Restart(t)
	r.WaitLoaded(t)

	renewWithin(t, holder, renewed, grace)
	abandonedIsRecovered(t, holder)
}

// TestNewLeaderWaitsARenewalRound: a lease ended while no one led (a
// leader's lock had lapsed, or Redis was away). The process that takes the
// lead must give the holder RenewGrace to renew before it recovers.
func TestNewLeaderWaitsARenewalRound(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name string
		rdb  func(testing.TB) rueidis.Client
	}{{"single", testkit.Single}, {"cluster", testkit.Cluster}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			prefix := testkit.Prefix(t)
			rdb := b.rdb(t)
			holder := store.New(rdb, prefix, nil)
			renewed := claimTwo(t, holder, 100*time.Millisecond)
			<-time.After(200 * time.Millisecond) // both leases ended

			const grace = 2 * time.Second
			n := startNodeOn(t, rdb, prefix, "a", graceQueues, Config{RecoverInterval: 20 * time.Millisecond, RenewGrace: grace})
			waitLeader(t, n)
			renewWithin(t, holder, renewed, grace)
			abandonedIsRecovered(t, holder)
		})
	}
}

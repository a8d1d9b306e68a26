package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

func TestAck(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", ""), job("b", ""))
		got := claim(t, s, 10, time.Hour)
		n, err := s.Ack(t.Context(), queue, tokens(got.Jobs))
		if err != nil || n != 2 {
			t.Fatalf("Ack = %d, %v; want 2", n, err)
		}
		st := state(t, c, k)
		if len(st.Jobs)+len(st.Claims)+len(st.Due)+len(st.Active)+len(st.Dead) != 0 {
			t.Errorf("after ack the queue holds %v", st)
		}
		// Acking again is a no-op: safe to repeat after a lost reply.
		if n, err := s.Ack(t.Context(), queue, tokens(got.Jobs)); n != 0 || err != nil {
			t.Errorf("second Ack = %d, %v; want 0", n, err)
		}
		if n, err := s.Ack(t.Context(), queue, nil); n != 0 || err != nil {
			t.Errorf("Ack(nil) = %d, %v", n, err)
		}
	})
}

func TestAckStaleToken(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", ""), job("never-claimed", ""), job("dead", ""))

		first := claimOne(t, s, time.Hour) // a
		if n, err := s.Snooze(t.Context(), queue, []store.Token{first.Token()}, 0); n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		byID := map[string]store.Record{} // a under a new claim, the others under their first
		for _, r := range claim(t, s, 3, time.Hour).Jobs {
			byID[r.ID] = r
		}
		dead, nc, second := byID["dead"], byID["never-claimed"], byID["a"]
		if ok, err := s.Kill(t.Context(), queue, dead.Token(), "x"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		if n, err := s.Snooze(t.Context(), queue, []store.Token{nc.Token()}, time.Hour); n != 1 || err != nil {
			t.Fatalf("Snooze = %v, %v", n, err)
		}
		if second.Claim <= first.Claim {
			t.Fatalf("second claim = %+v, want a under a claim after %d", second, first.Claim)
		}
		before := state(t, c, k)
		n, err := s.Ack(t.Context(), queue, []store.Token{
			first.Token(),                      // stale: claimed again since
			{ID: "a", Claim: second.Claim + 9}, // from the future
			{ID: "never-claimed", Claim: 0},    // due, not active
			nc.Token(),                         // snoozed: due, not active
			dead.Token(),                       // dead, not active
			{ID: "missing", Claim: 1},          // no such job
		})
		if n != 0 || err != nil {
			t.Errorf("Ack of stale tokens = %d, %v; want 0", n, err)
		}
		unchanged(t, c, k, before)

		if n, err := s.Ack(t.Context(), queue, []store.Token{second.Token()}); n != 1 || err != nil {
			t.Errorf("Ack of the current token = %d, %v; want 1", n, err)
		}
	})
}

func TestAckBatches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		const n = 2300
		jobs := make([]store.NewJob, n)
		for i := range jobs {
			jobs[i] = job(fmt.Sprintf("j%04d", i), "")
		}
		enqueue(t, s, jobs...)
		var toks []store.Token
		for len(toks) < n {
			got := claim(t, s, store.MaxBatch, time.Hour)
			if len(got.Jobs) == 0 {
				t.Fatalf("claimed %d of %d jobs", len(toks), n)
			}
			toks = append(toks, tokens(got.Jobs)...)
		}
		// Stale tokens in every batch are skipped, the rest are acked.
		mixed := slices.Clone(toks)
		for i := 0; i < n; i += 500 {
			mixed[i].Claim = 7
		}
		acked, err := s.Ack(t.Context(), queue, mixed)
		if err != nil || acked != n-5 {
			t.Errorf("Ack = %d, %v; want %d", acked, err, n-5)
		}
		st, err := s.Stats(t.Context(), queue)
		if err != nil || st != (store.Stats{Active: 5}) {
			t.Errorf("Stats = %+v, %v; want 5 active", st, err)
		}
	})
}

func TestExtend(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", ""), job("b", ""), job("acked", ""), job("recovered", ""))
		got := claim(t, s, 10, time.Second)
		byID := map[string]store.Token{}
		for _, r := range got.Jobs {
			byID[r.ID] = r.Token()
		}
		if n, err := s.Ack(t.Context(), queue, []store.Token{byID["acked"]}); n != 1 || err != nil {
			t.Fatalf("Ack = %d, %v", n, err)
		}
		// recovered: handed back and claimed again, so its first claim is stale
		if n, err := s.Snooze(t.Context(), queue, []store.Token{byID["recovered"]}, 0); n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		if again := claimOne(t, s, time.Second); again.ID != "recovered" || again.Claim <= byID["recovered"].Claim {
			t.Fatalf("claimed %+v, want recovered under a new claim", again)
		}
		enqueue(t, s, job("due", ""))
		oldLease := mustScore(t, c, k.Active, "a")
		recoveredLease := mustScore(t, c, k.Active, "recovered")

		before := testkit.RedisNow(t, c)
		lost, err := s.Extend(t.Context(), storetest.Renewals(map[string][]store.Token{queue: {
			byID["a"], byID["b"], byID["acked"], byID["recovered"],
			{ID: "due", Claim: 0}, {ID: "missing", Claim: 1},
		}}), time.Hour)
		after := testkit.RedisNow(t, c)
		if err != nil {
			t.Fatal(err)
		}
		// Lost tokens come back as they were given.
		want := []store.Lost{{Token: byID["acked"]}, {Token: byID["recovered"]}, {Token: store.Token{ID: "due", Claim: 0}}, {Token: store.Token{ID: "missing", Claim: 1}}}
		if !slices.Equal(lost[queue], want) || len(lost) != 1 {
			t.Errorf("lost = %v, want %s: %v", lost, queue, want)
		}
		for _, id := range []string{"a", "b"} {
			lease := mustScore(t, c, k.Active, id)
			inRange(t, "lease of "+id, lease, before+3_600_000, after+3_600_000)
			if lease <= oldLease {
				t.Errorf("lease of %s did not move forward: %d → %d", id, oldLease, lease)
			}
		}
		// A lost token changes nothing: the job claimed again keeps the
		// lease of its new claim, and no job is added to active.
		if lease := mustScore(t, c, k.Active, "recovered"); lease != recoveredLease {
			t.Errorf("lease of recovered moved %d → %d on a stale token", recoveredLease, lease)
		}
		for _, id := range []string{"acked", "missing", "due"} {
			if _, ok := testkit.ZScore(t, c, k.Active, id); ok {
				t.Errorf("%s was added to active", id)
			}
		}
		if lost, err := s.Extend(t.Context(), nil, time.Hour); err != nil || len(lost) != 0 {
			t.Errorf("Extend(nil) = %v, %v", lost, err)
		}
	})
}

func TestExtendManyQueues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		// Queues hash to different slots, so on a cluster one Extend call
		// spans nodes; "big" needs two script calls.
		sizes := map[string]int{"q1": 1, "q2": 3, "q3": 2, "big": 1500}
		byQueue := map[string][]store.Token{}
		for q, n := range sizes {
			jobs := make([]store.NewJob, n)
			for i := range jobs {
				jobs[i] = job(fmt.Sprintf("%s-%d", q, i), "")
			}
			enqueueTo(t, s, q, jobs...)
			for len(byQueue[q]) < n {
				byQueue[q] = append(byQueue[q], tokens(claimFrom(t, s, q, store.MaxBatch, time.Second).Jobs)...)
			}
		}
		byQueue["q2"][1].Claim = 9 // one stale token
		before := testkit.RedisNow(t, c)
		lost, err := s.Extend(t.Context(), storetest.Renewals(byQueue), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string][]store.Lost{"q2": {{Token: byQueue["q2"][1]}}}; fmt.Sprint(lost) != fmt.Sprint(want) {
			t.Errorf("lost = %v, want %v", lost, want)
		}
		for q, toks := range byQueue {
			for _, tok := range []store.Token{toks[0], toks[len(toks)-1]} {
				if lease := mustScore(t, c, s.Keys(q).Active, tok.ID); lease < before+3_600_000 {
					t.Errorf("%s/%s: lease %d not extended", q, tok.ID, lease)
				}
			}
		}
		if lease := mustScore(t, c, s.Keys("q2").Active, "q2-1"); lease >= before+3_600_000 {
			t.Errorf("q2/q2-1: lease extended by a stale token")
		}
	})
}

// TestTokensNeverRepeat: claim tokens are unique within a queue, even for a
// job enqueued again under the id of one that was acked. A worker still
// holding a stale claim of the first job must not be able to ack, extend or
// snooze the second.
func TestTokensNeverRepeat(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", "first"))
		stale := claimOne(t, s, time.Hour)
		// The first worker stalls; its lease is recovered and a second
		// worker runs the job and acks it.
		do(t, c, c.B().Zadd().Key(k.Active).ScoreMember().ScoreMember(0, "a").Build())
		if r, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), 10, 5); err != nil || r.Due != 1 {
			t.Fatalf("Recover = %+v, %v", r, err)
		}
		second := claimOne(t, s, time.Hour)
		if n, err := s.Ack(t.Context(), queue, []store.Token{second.Token()}); n != 1 || err != nil {
			t.Fatalf("Ack = %d, %v", n, err)
		}
		// The producer enqueues a new job under the same id; a third worker
		// claims it.
		enqueue(t, s, job("a", "second"))
		third := claimOne(t, s, time.Hour)
		if third.Claim == stale.Claim || third.Claim == second.Claim {
			t.Fatalf("claim tokens repeat: %d, %d, %d", stale.Claim, second.Claim, third.Claim)
		}
		before := state(t, c, k)
		if n, err := s.Ack(t.Context(), queue, []store.Token{stale.Token()}); n != 0 || err != nil {
			t.Errorf("stale Ack = %d, %v; want 0", n, err)
		}
		if lost, err := s.Extend(t.Context(), storetest.Renewals(map[string][]store.Token{queue: {stale.Token()}}), time.Hour); err != nil || len(lost[queue]) != 1 {
			t.Errorf("stale Extend lost %v, %v; want the stale token", lost, err)
		}
		if n, err := s.Snooze(t.Context(), queue, []store.Token{stale.Token()}, 0); n != 0 || err != nil {
			t.Errorf("stale Snooze = %d, %v; want 0", n, err)
		}
		unchanged(t, c, k, before)
	})
}

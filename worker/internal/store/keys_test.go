package store_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// keyed returns a job of key key, due now.
func keyed(id, key string) store.NewJob {
	return store.NewJob{ID: id, Key: key, Payload: []byte("p")}
}

// claimKeys claims up to n jobs of queue with a key cap.
func claimKeys(t *testing.T, s *store.Store, n, keyCap int, lease time.Duration) store.Claimed {
	t.Helper()
	c, err := s.ClaimWith(t.Context(), queue, n, lease, store.ClaimOptions{KeyCap: keyCap})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return c
}

// slotsHeld returns the slots each key holds (lua/keys.lua's kstate "r:").
func slotsHeld(t *testing.T, c rueidis.Client, k store.Keys) map[string]int {
	t.Helper()
	out := map[string]int{}
	for f, v := range testkit.HGetAll(t, c, k.KeyState) {
		if key, ok := cutPrefix(f, "r:"); ok {
			n, _ := strconv.Atoi(v)
			out[key] = n
		}
	}
	return out
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// keysOf returns the keys of the claimed jobs, in order.
func keysOfClaim(t *testing.T, s *store.Store, recs []store.Record) []string {
	t.Helper()
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = get(t, s, r.ID).Record.Key
	}
	return out
}

func TestKeyedJobsWaitAmongTheirKeys(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, keyed("a1", "acme"), store.NewJob{ID: "later", Key: "acme", Delay: time.Hour}, job("plain", "p"))
		snap := get(t, s, "a1")
		if snap.Set != store.SetDue || snap.Record.Key != "acme" {
			t.Fatalf("Get(a1) = set %q key %q, want due, acme", snap.Set, snap.Record.Key)
		}
		if z := zsetOf(t, c, k.Due); len(z) != 1 {
			t.Fatalf("due = %v, want only the unkeyed job", z)
		}
		st, err := s.Stats(t.Context(), queue)
		if err != nil || st.Ready != 2 || st.Scheduled != 1 {
			t.Fatalf("Stats = %+v, %v; want 2 ready, 1 scheduled", st, err)
		}
		got := claimKeys(t, s, 10, 0, time.Minute)
		if claimed := slices.Sorted(slices.Values(ids(got.Jobs))); !slices.Equal(claimed, []string{"a1", "plain"}) {
			t.Fatalf("claimed %v, want a1 and plain (later is not due)", claimed)
		}
		if got.Next.IsZero() || time.Until(got.Next) < 50*time.Minute {
			t.Fatalf("Next = %v, want the delayed job's run-at, an hour away", got.Next)
		}
		if h := slotsHeld(t, c, k); h["acme"] != 1 {
			t.Fatalf("slots = %v, want acme 1", h)
		}
		if n, err := s.Ack(t.Context(), queue, tokens(got.Jobs)); err != nil || n != 2 {
			t.Fatalf("Ack = %d, %v", n, err)
		}
		if h := slotsHeld(t, c, k); len(h) != 0 {
			t.Fatalf("slots after the ack = %v, want none", h)
		}
	})
}

func TestKeyCapHoldsAndEveryEndFreesTheSlot(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		var jobs []store.NewJob
		for i := range 10 {
			jobs = append(jobs, keyed(fmt.Sprintf("a%02d", i), "acme"))
		}
		enqueue(t, s, jobs...)
		first := claimKeys(t, s, 10, 2, time.Minute)
		if len(first.Jobs) != 2 {
			t.Fatalf("claimed %d jobs of a key capped at 2", len(first.Jobs))
		}
		if again := claimKeys(t, s, 10, 2, time.Minute); len(again.Jobs) != 0 {
			t.Fatalf("a second claim took %v while the key is at its cap", ids(again.Jobs))
		}
		// Each way a job leaves active gives its slot back.
		ends := []struct {
			name string
			end  func(r store.Record)
		}{
			{"ack", func(r store.Record) {
				if n, err := s.Ack(t.Context(), queue, []store.Token{r.Token()}); err != nil || n != 1 {
					t.Fatalf("Ack = %d, %v", n, err)
				}
			}},
			{"retry", func(r store.Record) {
				if ok, err := s.Retry(t.Context(), queue, r.Token(), 0, "boom"); err != nil || !ok {
					t.Fatalf("Retry = %v, %v", ok, err)
				}
			}},
			{"snooze", func(r store.Record) {
				if n, err := s.Snooze(t.Context(), queue, []store.Token{r.Token()}, 0); err != nil || n != 1 {
					t.Fatalf("Snooze = %d, %v", n, err)
				}
			}},
			{"dead", func(r store.Record) {
				if ok, err := s.Kill(t.Context(), queue, r.Token(), "fatal"); err != nil || !ok {
					t.Fatalf("Kill = %v, %v", ok, err)
				}
			}},
			{"cancel", func(r store.Record) {
				if _, err := s.Cancel(t.Context(), queue, r.ID); err != nil {
					t.Fatalf("Cancel: %v", err)
				}
			}},
		}
		running := first.Jobs
		for _, e := range ends {
			e.end(running[0])
			if h := slotsHeld(t, c, k); h["acme"] != 1 {
				t.Fatalf("after %s: slots = %v, want acme 1", e.name, h)
			}
			next := claimKeys(t, s, 10, 2, time.Minute)
			if len(next.Jobs) != 1 {
				t.Fatalf("after %s: claimed %v, want one job (one slot freed)", e.name, ids(next.Jobs))
			}
			running = []store.Record{running[1], next.Jobs[0]}
		}
		// The lease: a job whose process vanished gives its slot back when
		// the leader recovers it.
		if n, err := s.Ack(t.Context(), queue, tokens(running)); err != nil || n != 2 {
			t.Fatalf("Ack = %d, %v", n, err)
		}
		short := claimKeys(t, s, 10, 2, shortLease)
		if len(short.Jobs) != 2 {
			t.Fatalf("claimed %d, want 2", len(short.Jobs))
		}
		waitLeasesExpired(t, c, k, ids(short.Jobs)...)
		if _, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), 100, 5); err != nil {
			t.Fatalf("Recover: %v", err)
		}
		if h := slotsHeld(t, c, k); len(h) != 0 {
			t.Fatalf("after recover: slots = %v, want none", h)
		}
		if again := claimKeys(t, s, 10, 2, time.Minute); len(again.Jobs) != 2 {
			t.Fatalf("after recover: claimed %d, want 2", len(again.Jobs))
		}
	})
}

func TestKeysShareClaimsFairly(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		var jobs []store.NewJob
		for i := range 200 {
			jobs = append(jobs, keyed(fmt.Sprintf("big-%03d", i), "big"))
		}
		enqueue(t, s, jobs...)
		enqueue(t, s, keyed("small-1", "s1"), keyed("small-2", "s2"), keyed("small-3", "s3"), job("plain", "p"))
		// Five keys' worth of work (four keys and the unkeyed jobs) and
		// claims of five. A visit takes up to a quantum of a key's jobs
		// (keys.lua's KQUANTUM), so the big key may fill most of the first
		// claim; its pass then moves on, and the small keys and the
		// unkeyed job all start within two claims, not behind its backlog.
		var keys []string
		for range 2 {
			got := claimKeys(t, s, 5, 0, time.Minute)
			keys = append(keys, keysOfClaim(t, s, got.Jobs)...)
		}
		if len(keys) != 10 {
			t.Fatalf("two claims of five took %d jobs (%q), want 10", len(keys), keys)
		}
		for _, want := range []string{"", "s1", "s2", "s3"} {
			if !slices.Contains(keys, want) {
				t.Fatalf("two claims took jobs of keys %q: none of %q", keys, want)
			}
		}
	})
}

func TestCancelOfAWaitingKeyedJob(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, keyed("a", "acme"), keyed("b", "acme"))
		if r, err := s.Cancel(t.Context(), queue, "a"); err != nil || r != store.Cancelled {
			t.Fatalf("Cancel = %v, %v", r, err)
		}
		got := claimKeys(t, s, 10, 0, time.Minute)
		if !slices.Equal(ids(got.Jobs), []string{"b"}) {
			t.Fatalf("claimed %v, want b", ids(got.Jobs))
		}
		for _, key := range []string{k.KeyIDs, k.KeyDue, k.KeyCount} {
			if z := zsetOf(t, c, key); len(z) != 0 {
				t.Fatalf("%s = %v, want empty", key, z)
			}
		}
	})
}

func TestSnoozeLimitedHoldsTheKeyBack(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, keyed("a1", "acme"), keyed("a2", "acme"), keyed("b1", "beta"))
		first := claimKeys(t, s, 1, 0, time.Minute)
		if len(first.Jobs) != 1 {
			t.Fatalf("claimed %v", ids(first.Jobs))
		}
		var a store.Record
		for _, r := range first.Jobs {
			a = r
		}
		if a.Key != "acme" {
			// beta came first: take acme's too
			got := claimKeys(t, s, 1, 0, time.Minute)
			a = got.Jobs[0]
		}
		if n, err := s.SnoozeLimited(t.Context(), queue, []store.Token{a.Token()}, 400*time.Millisecond); err != nil || n != 1 {
			t.Fatalf("SnoozeLimited = %d, %v", n, err)
		}
		if h := slotsHeld(t, c, k); h["acme"] != 0 {
			t.Fatalf("slots = %v: the snooze gave acme's back", h)
		}
		got := claimKeys(t, s, 10, 0, time.Minute)
		for _, r := range got.Jobs {
			if r.Key == "acme" {
				t.Fatalf("claimed %s of the limited key acme", r.ID)
			}
		}
		if got.Next.IsZero() || time.Until(got.Next) > time.Second {
			t.Fatalf("Next = %v, want the end of acme's limit", got.Next)
		}
		testkit.Eventually(t, 3*time.Second, "acme's jobs once its limit passed", func() bool {
			return len(claimKeys(t, s, 10, 0, time.Minute).Jobs) > 0
		})
		snap := get(t, s, a.ID)
		if snap.Set != store.SetActive || snap.Record.Attempt != 1 {
			t.Fatalf("%s: set %s, attempt %d; want active on its first attempt (the limit spends none)", a.ID, snap.Set, snap.Record.Attempt)
		}
	})
}

func TestKeyRateLimit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		var jobs []store.NewJob
		for i := range 8 {
			jobs = append(jobs, keyed(fmt.Sprintf("a%d", i), "acme"), keyed(fmt.Sprintf("b%d", i), "beta"))
		}
		enqueue(t, s, jobs...)
		// beta's own limit: 1 per window; acme takes the queue's 3.
		one := store.Rate{N: 1, Per: time.Hour}
		if err := s.SetKeyLimits(t.Context(), []string{queue}, "beta", store.KeyLimits{Cap: -1, Rate: &one}); err != nil {
			t.Fatal(err)
		}
		o := store.ClaimOptions{KeyRate: store.Rate{N: 3, Per: 600 * time.Millisecond}}
		count := func(recs []store.Record) map[string]int {
			m := map[string]int{}
			for _, r := range recs {
				m[r.Key]++
			}
			return m
		}
		started := map[string]int{}
		deadline := time.Now().Add(400 * time.Millisecond)
		for time.Now().Before(deadline) {
			got, err := s.ClaimWith(t.Context(), queue, 10, time.Minute, o)
			if err != nil {
				t.Fatal(err)
			}
			for k, n := range count(got.Jobs) {
				started[k] += n
			}
		}
		if started["acme"] != 3 || started["beta"] != 1 {
			t.Fatalf("within one window: started %v; want acme 3 (the queue's key limit), beta 1 (its own)", started)
		}
		testkit.Eventually(t, 3*time.Second, "acme's window to free", func() bool {
			got, err := s.ClaimWith(t.Context(), queue, 10, time.Minute, o)
			if err != nil {
				t.Fatal(err)
			}
			m := count(got.Jobs)
			if m["beta"] > 0 {
				t.Fatalf("beta started again within its hour")
			}
			return m["acme"] > 0
		})
		infos, err := s.KeyInfos(t.Context(), []store.KeyRef{{Partition: queue, Key: "beta"}})
		if err != nil || infos[0].Limits.Rate == nil || *infos[0].Limits.Rate != one {
			t.Fatalf("KeyInfos(beta) = %+v, %v; want its rate 1 per 1h", infos, err)
		}
	})
}

// TestClaimsOfOneJobShareWithUnkeyedJobs: a process of one slot claims
// one job at a time; keyed and unkeyed jobs both due, each claim goes to
// one or the other in proportion (the keys' share of a claim is a
// fraction), so neither waits behind the other's backlog.
func TestClaimsOfOneJobShareWithUnkeyedJobs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		var jobs []store.NewJob
		for i := range 30 {
			jobs = append(jobs, keyed(fmt.Sprintf("k%02d", i), "acme"), job(fmt.Sprintf("u%02d", i), "p"))
		}
		enqueue(t, s, jobs...)
		kinds := map[bool]int{}
		for range 30 {
			got := claimKeys(t, s, 1, 0, time.Minute)
			if len(got.Jobs) != 1 {
				t.Fatalf("claimed %d jobs, want 1", len(got.Jobs))
			}
			kinds[got.Jobs[0].Key != ""]++
			if n, err := s.Ack(t.Context(), queue, tokens(got.Jobs)); err != nil || n != 1 {
				t.Fatalf("Ack = %d, %v", n, err)
			}
		}
		if kinds[true] < 5 || kinds[false] < 5 {
			t.Fatalf("of 30 claims of one job, %d keyed and %d unkeyed; want both shares", kinds[true], kinds[false])
		}
	})
}

package store_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestCancel(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		enqueue(t, s, store.NewJob{ID: "later", Delay: time.Hour})

		// Due (scheduled or ready): to the cancelled set with its record,
		// its state entry as it was.
		before := state(t, c, k)
		t0 := testkit.RedisNow(t, c)
		for _, id := range []string{"seed-due", "later"} {
			if res, err := s.Cancel(t.Context(), queue, id); res != store.Cancelled || err != nil {
				t.Errorf("Cancel(%s) = %v, %v; want Cancelled", id, res, err)
			}
		}
		t1 := testkit.RedisNow(t, c)
		st := state(t, c, k)
		for _, id := range []string{"seed-due", "later"} {
			_, inDue := st.Due[id]
			_, inClaims := st.Claims[id]
			if st.Jobs[id] != before.Jobs[id] || inDue || inClaims || st.State[id] != before.State[id] {
				t.Errorf("%s: want its record and state entry kept, out of due: %v", id, st)
			}
			inRange(t, "cancel time of "+id, int64(st.Cancelled[id]), t0, t1)
		}

		before = state(t, c, k)
		for id, want := range map[string]store.CancelResult{
			"seed-dead": store.CancelDead,
			"missing":   store.CancelNotFound,
			"later":     store.CancelAlready,
		} {
			if res, err := s.Cancel(t.Context(), queue, id); res != want || err != nil {
				t.Errorf("Cancel(%s) = %v, %v; want %v", id, res, err, want)
			}
		}
		unchanged(t, c, k, before)

		// Running: to cancelled, "cancelled", the attempt spent, the claim
		// gone; the message names the claim it ended.
		wakes := subscribeCancels(t, s, queue)
		held, _ := testkit.HGet(t, c, k.Claims, "seed-active")
		claim, _, _ := strings.Cut(held, "@")
		t0 = testkit.RedisNow(t, c)
		if res, err := s.Cancel(t.Context(), queue, "seed-active"); res != store.CancelRunning || err != nil {
			t.Errorf("Cancel(seed-active) = %v, %v; want CancelRunning", res, err)
		}
		t1 = testkit.RedisNow(t, c)
		st = state(t, c, k)
		if _, ok := st.Active["seed-active"]; ok {
			t.Errorf("seed-active still active: %v", st)
		}
		if _, ok := st.Claims["seed-active"]; ok {
			t.Errorf("seed-active's claim left behind: %v", st)
		}
		inRange(t, "cancel time", int64(st.Cancelled["seed-active"]), t0, t1)
		if _, ok := st.Dead["seed-active"]; ok {
			t.Errorf("seed-active in the dead set: %v", st)
		}
		if got := st.State["seed-active"]; got != "1;0;"+store.CancelledError {
			t.Errorf("state entry %q, want attempt 1 spent and the last error %q", got, store.CancelledError)
		}
		select {
		case tok := <-wakes:
			if tok.ID != "seed-active" || strconv.FormatInt(tok.Claim, 10) != claim {
				t.Errorf("cancel announced %+v, want seed-active's run, claim %s", tok, claim)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("no cancel announced on the wake channel")
		}

		// A message of a version that named no claim is any run of the id;
		// an id may hold ':'.
		for msg, want := range map[string]store.Token{
			"cancel:old-id":  {ID: "old-id"},
			"cancel@12:a:b@": {ID: "a:b@", Claim: 12},
		} {
			testkit.Do(t, c, c.B().Spublish().Channel(k.Wake).Message(msg).Build())
			select {
			case tok := <-wakes:
				if tok != want {
					t.Errorf("message %q read as %+v, want %+v", msg, tok, want)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("message %q: no cancel reported", msg)
			}
		}
	})
}

// subscribeCancels returns the runs announced on q's wake channel as
// cancelled.
func subscribeCancels(t *testing.T, s *store.Store, q string) <-chan store.Token {
	t.Helper()
	ids := make(chan store.Token, 16)
	subscribed := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(ctx, []string{q}, func(string, int64) {}, func(_ string, tok store.Token) { ids <- tok }, func() {
			select {
			case <-subscribed:
			default:
				close(subscribed)
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-subscribed:
	case err := <-done:
		t.Fatalf("Subscribe: %v", err)
	}
	return ids
}

func TestRequeue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		enqueue(t, s, store.NewJob{ID: "a", MaxAttempts: 3})
		r := claimOne(t, s, time.Hour)
		if ok, err := s.Retry(t.Context(), queue, r.Token(), 0, "first"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		r = claimOne(t, s, time.Hour)
		if ok, err := s.Kill(t.Context(), queue, r.Token(), "gave up"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		if r.Attempt != 2 {
			t.Fatalf("killed at %+v, want attempt 2", r)
		}

		before := testkit.RedisNow(t, c)
		moved, err := s.Requeue(t.Context(), queue, store.SetDead, []string{"a", "seed-due", "seed-active", "missing", "a"})
		after := testkit.RedisNow(t, c)
		if err != nil {
			t.Fatal(err)
		}
		if want := []bool{true, false, false, false, false}; !slices.Equal(moved, want) {
			t.Errorf("Requeue = %v, want %v", moved, want)
		}
		snap := get(t, s, "a")
		inRange(t, "run-at", snap.Score.UnixMilli(), before, after)
		// A fresh set of attempts; the last error stays.
		if snap.Set != store.SetDue || snap.Record.Attempt != 0 || snap.Record.Claim != 0 || snap.Record.LastError != "gave up" || snap.Record.MaxAttempts != 3 {
			t.Errorf("after Requeue: %+v", snap)
		}
		if _, ok := testkit.ZScore(t, c, k.Dead, "a"); ok {
			t.Error("a is still dead")
		}
		if r2 := claimOne(t, s, time.Hour); r2.ID != "a" || r2.Attempt != 1 || r2.Claim <= r.Claim {
			t.Errorf("claim after requeue = %+v, want attempt 1 under a new claim", r2)
		}
		// The other jobs are where they were.
		if snap := get(t, s, "seed-dead"); snap.Set != store.SetDead {
			t.Errorf("seed-dead moved to %s", snap.Set)
		}
	})
}

func TestRequeueBatch(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		const n = 1200 // two script calls
		ids := make([]string, n)
		jobs := make([]store.NewJob, n)
		for i := range jobs {
			ids[i] = fmt.Sprintf("j%04d", i)
			jobs[i] = job(ids[i], "")
		}
		enqueue(t, s, jobs...)
		for done := 0; done < n; {
			got := claim(t, s, store.MaxBatch, time.Hour)
			for _, r := range got.Jobs {
				if ok, err := s.Kill(t.Context(), queue, r.Token(), "x"); !ok || err != nil {
					t.Fatalf("Kill = %v, %v", ok, err)
				}
			}
			done += len(got.Jobs)
		}
		moved, err := s.Requeue(t.Context(), queue, store.SetDead, ids)
		if err != nil || len(moved) != n || slices.Contains(moved, false) {
			t.Errorf("Requeue = %d flags (%v), %v; want %d × true", len(moved), slices.Contains(moved, false), err, n)
		}
		if st, err := s.Stats(t.Context(), queue); err != nil || st != (store.Stats{Ready: n}) {
			t.Errorf("Stats = %+v, %v", st, err)
		}
	})
}

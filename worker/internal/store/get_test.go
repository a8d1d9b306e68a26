package store_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestQueueKeys(t *testing.T) {
	t.Parallel()
	k := store.QueueKeys("courier", "mail")
	all := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Leader, k.Rate, k.Periodic, k.Fleet, k.Wake}
	for _, key := range all {
		// One hash tag for all: one slot on a cluster.
		if !strings.HasPrefix(key, "courier:{mail}:") || strings.Count(key, "{") != 1 {
			t.Errorf("key %q does not carry the hash tag {mail} after the prefix", key)
		}
	}
	slices.Sort(all)
	if len(slices.Compact(all)) != 11 {
		t.Errorf("keys are not distinct: %+v", k)
	}
	if got := store.QueuesKey("courier"); got != "courier:queues" {
		t.Errorf("QueuesKey = %q", got)
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		for id, set := range map[string]store.Set{"seed-due": store.SetDue, "seed-active": store.SetActive, "seed-dead": store.SetDead} {
			before := testkit.RedisNow(t, c)
			snap := get(t, s, id)
			after := testkit.RedisNow(t, c)
			key := map[store.Set]string{store.SetDue: k.Due, store.SetActive: k.Active, store.SetDead: k.Dead}[set]
			if snap.Set != set || snap.Score.UnixMilli() != mustScore(t, c, key, id) || snap.Record.ID != id {
				t.Errorf("Get(%s) = %+v, want set %s with the score in %s", id, snap, set, key)
			}
			inRange(t, "Now", snap.Now.UnixMilli(), before, after)
		}
		if r := get(t, s, "seed-dead").Record; r.LastError != "seeded" || r.Claim != 0 || r.Attempt != 1 || string(r.Payload) != "d" {
			t.Errorf("seed-dead = %+v", r)
		}

		if _, err := s.Get(t.Context(), queue, "missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(missing) = %v, want ErrNotFound", err)
		}
		if _, err := s.Get(t.Context(), "other-queue", "seed-due"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get from another queue = %v, want ErrNotFound", err)
		}

		// A record in no set (the scripts never leave one) and a record
		// that does not decode.
		rec := store.EncodeRecord(store.Record{EnqueuedAt: time.UnixMilli(1)})
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("orphan", rec).FieldValue("junk", "junk").Build())
		if snap := get(t, s, "orphan"); snap.Set != store.SetNone || !snap.Score.IsZero() {
			t.Errorf("Get(orphan) = %+v, want set none and no score", snap)
		}
		if _, err := s.Get(t.Context(), queue, "junk"); !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("Get(junk) = %v, want ErrCorrupt", err)
		}
	})
}

func TestStats(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		if st, err := s.Stats(t.Context(), queue); err != nil || st != (store.Stats{}) {
			t.Errorf("Stats of an empty queue = %+v, %v", st, err)
		}
		seed(t, s) // 1 scheduled, 1 active, 1 dead
		enqueue(t, s, job("r1", ""), job("r2", ""), store.NewJob{ID: "s2", Delay: time.Minute},
			store.NewJob{ID: "past", At: time.UnixMilli(1)})
		st, err := s.Stats(t.Context(), queue)
		if want := (store.Stats{Ready: 3, Scheduled: 2, Active: 1, Dead: 1}); err != nil || st != want {
			t.Errorf("Stats = %+v, %v; want %+v", st, err, want)
		}
	})
}

func TestQueues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		if names, err := s.Queues(t.Context()); err != nil || len(names) != 0 {
			t.Errorf("Queues = %v, %v; want none", names, err)
		}
		if err := s.AddQueues(t.Context()); err != nil {
			t.Errorf("AddQueues() = %v", err)
		}
		for _, batch := range [][]string{{"mail", "sms"}, {"sms", "push"}} {
			if err := s.AddQueues(t.Context(), batch...); err != nil {
				t.Fatal(err)
			}
		}
		names, err := s.Queues(t.Context())
		slices.Sort(names)
		if want := []string{"mail", "push", "sms"}; err != nil || !slices.Equal(names, want) {
			t.Errorf("Queues = %v, %v; want %v", names, err, want)
		}
	})
}

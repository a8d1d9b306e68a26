package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestForgetQueue: one named queue is forgotten, with its leftovers and
// its name, only when QueueUse finds nothing holding it; each thing that
// holds a queue shows in QueueUse and makes the script refuse.
func TestForgetQueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		held := map[string]func(q string){
			"ready": func(q string) { enqueueNow(t, s, q, "j") },
			"scheduled": func(q string) {
				if _, err := s.Enqueue(ctx, q, []store.NewJob{{ID: "j", Delay: time.Hour}}); err != nil {
					t.Fatal(err)
				}
			},
			"dead": func(q string) {
				enqueueNow(t, s, q, "j")
				cl, err := s.Claim(ctx, q, 1, time.Minute)
				if err != nil || len(cl.Jobs) != 1 {
					t.Fatalf("claim = %+v, %v", cl, err)
				}
				if ok, err := s.Kill(ctx, q, cl.Jobs[0].Token(), "boom"); err != nil || !ok {
					t.Fatalf("kill = %v, %v", ok, err)
				}
			},
			"served": func(q string) {
				if err := s.Report(ctx, q, store.Member{ID: "p1", Concurrency: 1}, time.Minute); err != nil {
					t.Fatal(err)
				}
			},
			"paused": func(q string) {
				if _, err := s.Pause(ctx, q); err != nil {
					t.Fatal(err)
				}
			},
			"periodic": func(q string) {
				testkit.Do(t, c, c.B().Hset().Key(s.Keys(q).Periodic).FieldValue().FieldValue("tick", "1").Build())
			},
			"unique": func(q string) {
				if _, err := s.Enqueue(ctx, q, []store.NewJob{{ID: "j", Unique: store.Unique{Key: "k", For: time.Hour}}}); err != nil {
					t.Fatal(err)
				}
				testkit.Do(t, c, c.B().Del().Key(s.Keys(q).Jobs, s.Keys(q).Due, s.Keys(q).Opts).Build())
			},
		}
		for name, hold := range held {
			if err := s.AddQueues(ctx, name); err != nil {
				t.Fatal(err)
			}
			hold(name)
			use, err := s.QueueUse(ctx, name)
			if err != nil || !use.InUse() {
				t.Errorf("QueueUse(%s) = %+v, %v; want in use", name, use, err)
			}
			if ok, err := s.ForgetQueue(ctx, name); err != nil || ok {
				t.Errorf("ForgetQueue(%s) = %v, %v; want refused", name, ok, err)
			}
		}
		// The refused forget kept the history (the dead job's death).
		if !testkit.Exists(t, c, s.Keys("dead").History) || !testkit.Exists(t, c, s.Keys("dead").HistoryIndex) {
			t.Error("a refused ForgetQueue deleted the history")
		}
		names, err := s.Queues(ctx)
		if err != nil || len(names) != len(held) {
			t.Errorf("queues after the refusals: %v, %v; want all %d", names, err, len(held))
		}

		// drained: a job ran and was acked; the pins and the token stay,
		// and a process that died without withdrawing is still in the set.
		enqueueNow(t, s, "drained", "j")
		cl, err := s.Claim(ctx, "drained", 1, time.Minute)
		if err != nil || len(cl.Jobs) != 1 {
			t.Fatalf("claim = %+v, %v", cl, err)
		}
		if n, err := s.Ack(ctx, "drained", []store.Token{cl.Jobs[0].Token()}); err != nil || n != 1 {
			t.Fatalf("ack = %d, %v", n, err)
		}
		if err := s.AddQueues(ctx, "drained"); err != nil {
			t.Fatal(err)
		}
		k := s.Keys("drained")
		testkit.Do(t, c, c.B().Sadd().Key(k.Fleet).Member("died").Build())
		// The ack wrote the history, which keeps no queue in use.
		if !testkit.Exists(t, c, k.History) || !testkit.Exists(t, c, k.HistoryIndex) {
			t.Fatal("no history after an ack")
		}
		use, err := s.QueueUse(ctx, "drained")
		if err != nil || use.InUse() {
			t.Fatalf("QueueUse(drained) = %+v, %v; want unused (the dead process forgotten)", use, err)
		}
		if ok, err := s.ForgetQueue(ctx, "drained"); err != nil || !ok {
			t.Fatalf("ForgetQueue(drained) = %v, %v; want forgotten", ok, err)
		}
		for _, key := range []string{k.Active, k.Claims, k.Fleet, k.History, k.HistoryIndex} {
			if testkit.Exists(t, c, key) {
				t.Errorf("%s of the forgotten queue is still there", key)
			}
		}
		if names, err := s.Queues(ctx); err != nil || slices.Contains(names, "drained") {
			t.Errorf("queues %v, %v; want drained gone", names, err)
		}
		// A queue never known: nothing to do, no error.
		if ok, err := s.ForgetQueue(ctx, "never"); err != nil || !ok {
			t.Errorf("ForgetQueue(never) = %v, %v; want true", ok, err)
		}
	})
}

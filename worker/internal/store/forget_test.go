package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestForgetQueues: a queue whose jobs are all gone, that no process serves,
// is forgotten with its leftovers (the pins, the last token, the history); queues with a
// job in any state, a process reporting, a periodic schedule, a pause, or
// that the caller serves are kept untouched.
func TestForgetQueues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		if err := s.AddQueues(ctx, "drained", "waiting", "dead", "served", "reported", "scheduled", "paused"); err != nil {
			t.Fatal(err)
		}
		// paused: drained like the first, but an operator paused it.
		if _, err := s.Pause(ctx, "paused"); err != nil {
			t.Fatal(err)
		}
		// drained: a job ran and was acked; the pins and the token stay.
		enqueueNow(t, s, "drained", "j")
		cl, err := s.Claim(ctx, "drained", 1, time.Minute)
		if err != nil || len(cl.Jobs) != 1 {
			t.Fatalf("claim = %+v, %v", cl, err)
		}
		if n, err := s.Ack(ctx, "drained", []store.Token{cl.Jobs[0].Token()}); err != nil || n != 1 {
			t.Fatalf("ack = %d, %v", n, err)
		}
		enqueueNow(t, s, "waiting", "j")
		enqueueNow(t, s, "dead", "j")
		cl, err = s.Claim(ctx, "dead", 1, time.Minute)
		if err != nil || len(cl.Jobs) != 1 {
			t.Fatalf("claim = %+v, %v", cl, err)
		}
		if ok, err := s.Kill(ctx, "dead", cl.Jobs[0].Token(), "boom"); err != nil || !ok {
			t.Fatalf("kill = %v, %v", ok, err)
		}
		if err := s.Report(ctx, "reported", store.Member{ID: "p", Concurrency: 1}, time.Minute); err != nil {
			t.Fatal(err)
		}
		testkit.Do(t, c, c.B().Hset().Key(s.Keys("scheduled").Periodic).FieldValue().FieldValue("tick", "1").Build())

		if !testkit.Exists(t, c, s.Keys("drained").History) {
			t.Fatal("no history after an ack")
		}
		gone, err := s.ForgetQueues(ctx, []string{"served"})
		if err != nil || !slices.Equal(gone, []string{"drained"}) {
			t.Fatalf("ForgetQueues = %v, %v; want [drained]", gone, err)
		}
		names, err := s.Queues(ctx)
		slices.Sort(names)
		if err != nil || !slices.Equal(names, []string{"dead", "paused", "reported", "scheduled", "served", "waiting"}) {
			t.Errorf("queues left %v, %v", names, err)
		}
		if p, err := s.Paused(ctx, "paused"); err != nil || !p {
			t.Errorf("the paused queue's flag after ForgetQueues: %v, %v; want still paused", p, err)
		}
		// Once resumed, nothing keeps it.
		if _, err := s.Resume(ctx, "paused"); err != nil {
			t.Fatal(err)
		}
		if gone, err := s.ForgetQueues(ctx, []string{"served"}); err != nil || !slices.Equal(gone, []string{"paused"}) {
			t.Errorf("ForgetQueues after the resume = %v, %v; want [paused]", gone, err)
		}
		k := s.Keys("drained")
		for _, key := range []string{k.Active, k.Claims, k.History, k.HistoryIndex} {
			if testkit.Exists(t, c, key) {
				t.Errorf("%s of the forgotten queue is still there", key)
			}
		}
		if st, err := s.Stats(ctx, "waiting"); err != nil || st.Ready != 1 {
			t.Errorf("waiting queue's stats %+v, %v; want its job", st, err)
		}
	})
}

// enqueueNow enqueues one job due now.
func enqueueNow(t *testing.T, s *store.Store, queue, id string) {
	t.Helper()
	if _, err := s.Enqueue(t.Context(), queue, []store.NewJob{{ID: id}}); err != nil {
		t.Fatal(err)
	}
}

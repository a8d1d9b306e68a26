package store_test

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestImport(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		ledger := s.LedgerKey(queue, "asynq")
		at := time.Now().Add(time.Hour).Truncate(time.Millisecond)
		died := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		enqueue(t, s, job("taken", "x"))
		jobs := []store.ImportJob{
			{NewJob: store.NewJob{ID: "a", At: at, MaxAttempts: 4, Timeout: time.Minute, Payload: []byte("pa"),
				Headers: map[string]string{"courier.kind": "email:deliver"}, Unique: store.Unique{Key: "u", For: time.Hour}},
				Member: "src-a", Attempts: 2, LastError: "boom"},
			{NewJob: store.NewJob{ID: "d", MaxAttempts: 1, Payload: []byte("pd")}, Member: "src-d", Attempts: 1, LastError: "dead end", DiedAt: died},
			{NewJob: store.NewJob{ID: "taken"}, Member: "src-taken"},
			{NewJob: store.NewJob{ID: "b", Unique: store.Unique{Key: "u"}}, Member: "src-b"},
			{NewJob: store.NewJob{ID: "a2"}, Member: "src-a"}, // the ledger holds it, from this very call
		}
		out, err := s.Import(t.Context(), store.Target{Partition: queue}, ledger, jobs)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.Imported{{Outcome: store.ImportAdded}, {Outcome: store.ImportAdded}, {Outcome: store.ImportSkippedID},
			{Outcome: store.ImportSkippedUnique, Holder: "a"}, {Outcome: store.ImportAlready}}
		for i := range want {
			if out[i] != want[i] {
				t.Errorf("job %d: %+v, want %+v", i, out[i], want[i])
			}
		}
		a := get(t, s, "a")
		if a.Set != store.SetDue || !a.Score.Equal(at) || a.Record.Attempt != 2 || a.Record.MaxAttempts != 4 ||
			a.Record.LastError != "boom" || a.Record.Timeout != time.Minute || string(a.Record.Payload) != "pa" ||
			a.Record.Headers["courier.kind"] != "email:deliver" || a.Record.Unique.Key != "u" {
			t.Errorf("a = %+v at %s", a.Record, a.Score)
		}
		d := get(t, s, "d")
		if d.Set != store.SetDead || !d.Score.Equal(died) || d.Record.Attempt != 1 || d.Record.LastError != "dead end" {
			t.Errorf("d = %+v in %s at %s", d.Record, d.Set, d.Score)
		}
		if n, _ := c.Do(t.Context(), c.B().Scard().Key(ledger).Build()).AsInt64(); n != 2 {
			t.Errorf("ledger holds %d members, want 2", n)
		}
		// A second run writes nothing, even after a job left Courier.
		do(t, c, c.B().Hdel().Key(k.Jobs).Field("d").Build())
		do(t, c, c.B().Zrem().Key(k.Dead).Member("d").Build())
		before := state(t, c, k)
		out, err = s.Import(t.Context(), store.Target{Partition: queue}, ledger, jobs[:2])
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Outcome != store.ImportAlready || out[1].Outcome != store.ImportAlready {
			t.Errorf("second run: %+v", out)
		}
		unchanged(t, c, k, before)
		held, err := s.Ledgered(t.Context(), ledger, []string{"src-a", "src-x", "src-d"})
		if err != nil || !held[0] || held[1] || !held[2] {
			t.Errorf("Ledgered = %v, %v", held, err)
		}
	})
}

package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// The state hash (lua/record.lua): what changes of a job is written there,
// never into its record, and goes with the job.

// oldRecord writes job id of queue the way a version before the state hash
// left it: attempts and last error in the record's header, in set key at
// score, with claim token tok in the claims hash when tok is not empty.
func oldRecord(t *testing.T, c rueidis.Client, k store.Keys, r store.Record, key string, score int64, tok string) string {
	t.Helper()
	rec := store.EncodeRecord(r)
	do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue(r.ID, rec).Build())
	do(t, c, c.B().Zadd().Key(key).ScoreMember().ScoreMember(float64(score), r.ID).Build())
	if tok != "" {
		do(t, c, c.B().Hset().Key(k.Claims).FieldValue().FieldValue(r.ID, tok).Build())
	}
	return rec
}

// TestStateKeepsRecords: retry, kill, recover and requeue count attempts
// and keep errors in the state entry; the record stays as enqueue wrote it.
func TestStateKeepsRecords(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		ctx := t.Context()
		enqueue(t, s, store.NewJob{ID: "a", MaxAttempts: 3, Payload: []byte("pa")}, job("b", "pb"))
		records := state(t, c, k).Jobs
		held := tokens(claim(t, s, 2, time.Hour).Jobs)
		if ok, err := s.Retry(ctx, queue, held[0], 0, "a failed"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		if ok, err := s.Kill(ctx, queue, held[1], "b gave up"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		expired := claim(t, s, 1, shortLease)
		waitLeasesExpired(t, c, k, ids(expired.Jobs)...)
		if got, err := s.Recover(ctx, queue, leaderField(t, s, c, queue), 10, 5); err != nil || got != (store.Recovered{Due: 1}) {
			t.Fatalf("Recover = %+v, %v; want 1 due", got, err)
		}
		if moved, err := s.Requeue(ctx, queue, store.SetDead, []string{"b"}); err != nil || !moved[0] {
			t.Fatalf("Requeue = %v, %v", moved, err)
		}
		st := state(t, c, k)
		want := map[string]string{
			"a": "2;3;lease expired: the worker running attempt 2 stopped responding",
			"b": "0;0;b gave up",
		}
		for id := range want {
			if st.Jobs[id] != records[id] {
				t.Errorf("record of %s = %q, want it as enqueued: %q", id, st.Jobs[id], records[id])
			}
			if st.State[id] != want[id] {
				t.Errorf("state[%s] = %q, want %q", id, st.State[id], want[id])
			}
		}
		if r := get(t, s, "a").Record; r.Attempt != 2 || r.MaxAttempts != 3 || !strings.HasPrefix(r.LastError, "lease expired") {
			t.Errorf("Get(a) = %+v, want attempt 2 of 3 after a lease error", r)
		}
		if r := get(t, s, "b").Record; r.Attempt != 0 || r.LastError != "b gave up" || string(r.Payload) != "pb" {
			t.Errorf("Get(b) = %+v, want no attempt spent after its error", r)
		}
	})
}

// TestStateGoesWithTheJob: ack, purge (of a dead or cancelled job) and trim delete a job's state
// entry with its record, and enqueue drops one left behind under its id.
func TestStateGoesWithTheJob(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		ctx := t.Context()
		ids := []string{"acked", "cancelled", "purged", "trimmed"}
		for _, id := range ids {
			enqueue(t, s, store.NewJob{ID: id, MaxAttempts: 9})
		}
		byID := map[string]store.Token{}
		for _, tok := range tokens(claim(t, s, 4, time.Hour).Jobs) {
			byID[tok.ID] = tok
		}
		if ok, err := s.Retry(ctx, queue, byID["cancelled"], time.Hour, "failed"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		for _, id := range []string{"purged", "trimmed"} {
			if ok, err := s.Kill(ctx, queue, byID[id], "dead"); !ok || err != nil {
				t.Fatalf("Kill(%s) = %v, %v", id, ok, err)
			}
		}
		if got := len(state(t, c, k).State); got != 4 {
			t.Fatalf("%d state entries, want 4", got)
		}
		if n, err := s.Ack(ctx, queue, []store.Token{byID["acked"]}); n != 1 || err != nil {
			t.Errorf("Ack = %d, %v", n, err)
		}
		if res, err := s.Cancel(ctx, queue, "cancelled"); res != store.Cancelled || err != nil {
			t.Errorf("Cancel = %v, %v", res, err)
		}
		if st := state(t, c, k).State["cancelled"]; st == "" {
			t.Errorf("the cancelled job's state entry is gone; want it kept with its record")
		}
		if done, err := s.Purge(ctx, queue, store.SetCancelled, []string{"cancelled"}, time.Time{}); err != nil || !done[0] {
			t.Errorf("Purge of the cancelled = %v, %v", done, err)
		}
		if done, err := s.Purge(ctx, queue, store.SetDead, []string{"purged"}, time.Time{}); err != nil || !done[0] {
			t.Errorf("Purge = %v, %v", done, err)
		}
		if got, err := s.TrimDead(ctx, queue, leaderField(t, s, c, queue), 0, time.Hour, 10); err != nil || got.ByCount != 1 {
			t.Errorf("TrimDead = %+v, %v; want 1 by count", got, err)
		}
		if st := state(t, c, k); len(st.Jobs)+len(st.State) != 0 {
			t.Errorf("left behind: %v", st)
		}

		// A state entry left by a version that did not delete it is not
		// the new job's.
		do(t, c, c.B().Hset().Key(k.State).FieldValue().FieldValue("acked", "7;2;stale").Build())
		enqueue(t, s, job("acked", "new"))
		if r := claimOne(t, s, time.Hour); r.ID != "acked" || r.Attempt != 1 || r.MaxAttempts != 0 || r.LastError != "" {
			t.Errorf("claim of the new job = %+v, want attempt 1, the queue's max, no error", r)
		}
	})
}

// TestStateOfOlderRecords: records of a version before the state hash keep
// attempts and the last error in their header. Claim moves them to a state
// entry; recover reads the header of a job claimed under such a version's
// token (below 10^15) and requeue that of a dead job without an entry.
func TestStateOfOlderRecords(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		ctx := t.Context()
		now := testkit.RedisNow(t, c)
		enq := time.UnixMilli(now - 60_000)
		due := oldRecord(t, c, k, store.Record{ID: "due", Attempt: 2, MaxAttempts: 4, LastError: "old;error", EnqueuedAt: enq, Payload: []byte("p")}, k.Due, now-1000, "")
		running := oldRecord(t, c, k, store.Record{ID: "running", Attempt: 1, MaxAttempts: 2, LastError: "x", EnqueuedAt: enq}, k.Active, now-1000, "41")
		dead := oldRecord(t, c, k, store.Record{ID: "dead", Attempt: 3, MaxAttempts: 3, LastError: "gave up", EnqueuedAt: enq}, k.Dead, now-1000, "")

		r := claimOne(t, s, time.Hour)
		if r.ID != "due" || r.Attempt != 3 || r.MaxAttempts != 4 || r.LastError != "old;error" || string(r.Payload) != "p" {
			t.Errorf("claim of an older record = %+v, want attempt 3 of 4 after old;error", r)
		}
		if st := state(t, c, k).State["due"]; st != "2;4;old;error" {
			t.Errorf("state[due] = %q, want the header's 2;4;old;error", st)
		}
		if ok, err := s.Retry(ctx, queue, r.Token(), time.Hour, "new error"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		if r := get(t, s, "due").Record; r.Attempt != 3 || r.MaxAttempts != 4 || r.LastError != "new error" {
			t.Errorf("after Retry: %+v, want attempt 3 of 4 after new error", r)
		}

		// The older version's attempt 2 of 2 expired: it is the last.
		if got, err := s.Recover(ctx, queue, leaderField(t, s, c, queue), 10, 5); err != nil || got != (store.Recovered{Dead: 1}) {
			t.Fatalf("Recover = %+v, %v; want 1 dead", got, err)
		}
		if snap := get(t, s, "running"); snap.Set != store.SetDead || snap.Record.Attempt != 2 || !strings.Contains(snap.Record.LastError, "no attempts left") {
			t.Errorf("recovered job = %+v, want dead after attempt 2 of its own 2", snap)
		}

		if moved, err := s.Requeue(ctx, queue, store.SetDead, []string{"dead"}); err != nil || !moved[0] {
			t.Fatalf("Requeue = %v, %v", moved, err)
		}
		if snap := get(t, s, "dead"); snap.Set != store.SetDue || snap.Record.Attempt != 0 || snap.Record.MaxAttempts != 3 || snap.Record.LastError != "gave up" {
			t.Errorf("requeued job = %+v, want due, no attempt spent, its own max and last error kept", snap)
		}
		st := state(t, c, k)
		for id, rec := range map[string]string{"due": due, "running": running, "dead": dead} {
			if st.Jobs[id] != rec {
				t.Errorf("record of %s = %q, want it unchanged: %q", id, st.Jobs[id], rec)
			}
		}
	})
}

package store_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestEnqueueOne(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		before := testkit.RedisNow(t, c)
		enqueue(t, s, store.NewJob{ID: "a", MaxAttempts: 4, Timeout: 90 * time.Second, Payload: []byte("hello")})
		after := testkit.RedisNow(t, c)

		snap := get(t, s, "a")
		if snap.Set != store.SetDue {
			t.Errorf("set = %s, want due", snap.Set)
		}
		inRange(t, "run-at", snap.Score.UnixMilli(), before, after)
		r := snap.Record
		if r.Claim != 0 || r.Attempt != 0 || r.MaxAttempts != 4 || r.Timeout != 90*time.Second ||
			r.LastError != "" || string(r.Payload) != "hello" {
			t.Errorf("record = %+v", r)
		}
		inRange(t, "enqueued at", r.EnqueuedAt.UnixMilli(), before, after)
		if _, ok := testkit.HGet(t, c, k.Claims, "a"); ok {
			t.Error("a claim count exists before the first claim")
		}
	})
}

func TestEnqueueBatchAcrossScriptCalls(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		const n = 2500 // three script calls of at most store.MaxBatch
		jobs := make([]store.NewJob, n)
		for i := range jobs {
			jobs[i] = job(fmt.Sprintf("j%04d", i), fmt.Sprint(i))
		}
		// Two ids that were added in an earlier call of the same batch.
		jobs[1500].ID, jobs[2400].ID = "j0001", "j0999"
		added, err := s.Enqueue(t.Context(), queue, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if len(added) != n {
			t.Fatalf("Enqueue returned %d flags, want %d", len(added), n)
		}
		for i, ok := range added {
			if want := i != 1500 && i != 2400; ok != want {
				t.Errorf("added[%d] (%s) = %v, want %v", i, jobs[i].ID, ok, want)
			}
		}
		st, err := s.Stats(t.Context(), queue)
		if err != nil {
			t.Fatal(err)
		}
		if st.Ready != n-2 {
			t.Errorf("ready = %d, want %d", st.Ready, n-2)
		}
		if hlen, _ := c.Do(t.Context(), c.B().Hlen().Key(s.Keys(queue).Jobs).Build()).AsInt64(); hlen != n-2 {
			t.Errorf("HLEN jobs = %d, want %d", hlen, n-2)
		}
		if p := get(t, s, "j0001").Record.Payload; string(p) != "1" {
			t.Errorf("payload of j0001 = %q, want the first copy's", p)
		}
	})
}

func TestEnqueueEmpty(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		added, err := s.Enqueue(t.Context(), queue, nil)
		if err != nil || len(added) != 0 {
			t.Errorf("Enqueue(nil) = %v, %v", added, err)
		}
	})
}

func TestEnqueueDuplicateLeavesOriginal(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, store.NewJob{ID: "a", Delay: time.Hour, MaxAttempts: 3, Payload: []byte("original")})
		before := state(t, c, k)

		added, err := s.Enqueue(t.Context(), queue, []store.NewJob{
			{ID: "a", Payload: []byte("replacement"), MaxAttempts: 9}, // due now: would move the score
			{ID: "b", Payload: []byte("first")},
			{ID: "b", Payload: []byte("second"), Delay: time.Hour},
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := []bool{false, true, false}; fmt.Sprint(added) != fmt.Sprint(want) {
			t.Errorf("added = %v, want %v", added, want)
		}
		if got := state(t, c, k); got.Jobs["a"] != before.Jobs["a"] || got.Due["a"] != before.Due["a"] {
			t.Errorf("job a changed: record %q → %q, run-at %v → %v", before.Jobs["a"], got.Jobs["a"], before.Due["a"], got.Due["a"])
		}
		if r := get(t, s, "a").Record; string(r.Payload) != "original" || r.MaxAttempts != 3 {
			t.Errorf("a = %+v", r)
		}
		if snap := get(t, s, "b"); string(snap.Record.Payload) != "first" || snap.Score.After(snap.Now) {
			t.Errorf("b = %+v, want the first copy, due now", snap)
		}

		// An id that is running or dead exists too.
		r := claim(t, s, 10, time.Hour)
		if len(r.Jobs) != 1 || r.Jobs[0].ID != "b" {
			t.Fatalf("claimed %v, want [b]", ids(r.Jobs))
		}
		added, err = s.Enqueue(t.Context(), queue, []store.NewJob{job("b", "again")})
		if err != nil || added[0] {
			t.Errorf("enqueue of a running id = %v, %v; want not added", added, err)
		}
		if ok, err := s.Kill(t.Context(), queue, r.Jobs[0].Token(), "x"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		added, err = s.Enqueue(t.Context(), queue, []store.NewJob{job("b", "again")})
		if err != nil || added[0] {
			t.Errorf("enqueue of a dead id = %v, %v; want not added", added, err)
		}
	})
}

func TestEnqueueRunAt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		at := time.UnixMilli(testkit.RedisNow(t, c) + 3_600_123)
		past := time.UnixMilli(testkit.RedisNow(t, c) - 60_000)
		before := testkit.RedisNow(t, c)
		enqueue(t, s,
			store.NewJob{ID: "at", At: at},
			store.NewJob{ID: "at-wins", At: at, Delay: 5 * time.Second},
			store.NewJob{ID: "past", At: past},
			store.NewJob{ID: "delay", Delay: 90 * time.Second},
			store.NewJob{ID: "delay-sub-ms", Delay: 90*time.Second + 999*time.Microsecond},
			store.NewJob{ID: "now"},
		)
		after := testkit.RedisNow(t, c)

		for _, id := range []string{"at", "at-wins"} {
			if got := mustScore(t, c, k.Due, id); got != at.UnixMilli() {
				t.Errorf("run-at of %s = %d, want %d", id, got, at.UnixMilli())
			}
		}
		if got := mustScore(t, c, k.Due, "past"); got != past.UnixMilli() {
			t.Errorf("run-at of past = %d, want %d", got, past.UnixMilli())
		}
		// Delays count from the Redis clock when the script ran.
		inRange(t, "run-at of delay", mustScore(t, c, k.Due, "delay"), before+90_000, after+90_000)
		inRange(t, "run-at of delay-sub-ms", mustScore(t, c, k.Due, "delay-sub-ms"), before+90_000, after+90_000)
		inRange(t, "run-at of now", mustScore(t, c, k.Due, "now"), before, after)
	})
}

func TestEnqueuePayloadRoundTrip(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		big := bytes.Repeat(allBytes, 4096) // 1 MiB
		payloads := map[string][]byte{
			"empty":      {},
			"nil":        nil,
			"binary":     allBytes,
			"semicolons": []byte(";;c2;0;0;0;0;0;;"),
			"big":        big,
		}
		var jobs []store.NewJob
		for id, p := range payloads {
			jobs = append(jobs, store.NewJob{ID: id, Payload: p})
		}
		enqueue(t, s, jobs...)
		got := claim(t, s, 10, time.Hour)
		if len(got.Jobs) != len(payloads) {
			t.Fatalf("claimed %d jobs, want %d", len(got.Jobs), len(payloads))
		}
		for _, r := range got.Jobs {
			if !bytes.Equal(r.Payload, payloads[r.ID]) {
				t.Errorf("payload of %s: got %d bytes %q…, want %d bytes", r.ID, len(r.Payload), r.Payload[:min(len(r.Payload), 16)], len(payloads[r.ID]))
			}
		}

		// Scripts that rewrite the record's header copy the payload intact.
		var bin store.Token
		for _, r := range got.Jobs {
			if r.ID == "binary" {
				bin = r.Token()
			}
		}
		if ok, err := s.Retry(t.Context(), queue, bin, 0, "err;with;semicolons\x00"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		r := claimOne(t, s, time.Hour)
		if !bytes.Equal(r.Payload, allBytes) || r.LastError != "err;with;semicolons\x00" {
			t.Errorf("after retry: payload %q, error %q", r.Payload, r.LastError)
		}
		if n, err := s.Snooze(t.Context(), queue, []store.Token{r.Token()}, 0); n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		r = claimOne(t, s, time.Hour)
		if ok, err := s.Kill(t.Context(), queue, r.Token(), "dead"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		if moved, err := s.Requeue(t.Context(), queue, store.SetDead, []string{"binary"}); err != nil || !moved[0] {
			t.Fatalf("Requeue = %v, %v", moved, err)
		}
		if r := claimOne(t, s, time.Hour); !bytes.Equal(r.Payload, allBytes) {
			t.Errorf("after snooze, kill and requeue: payload %q", r.Payload)
		}
	})
}

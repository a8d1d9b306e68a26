package store_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// completeAll completes held jobs of queue with the results given by id
// ("" for none) and fails unless every one moved.
func completeAll(t *testing.T, s *store.Store, held []store.Record, results map[string]string) {
	t.Helper()
	done := make([]store.Completion, len(held))
	for i, r := range held {
		done[i] = store.Completion{Token: r.Token()}
		if res := results[r.ID]; res != "" {
			done[i].Result = []byte(res)
		}
	}
	if n, err := s.Complete(t.Context(), queue, done); err != nil || n != len(held) {
		t.Fatalf("Complete(%v) = %d, %v; want %d", ids(held), n, err, len(held))
	}
}

// setFinished moves completed jobs to the finish times given (ms), as if
// they had finished then.
func setFinished(t *testing.T, c rueidis.Client, k store.Keys, at map[string]int64) {
	t.Helper()
	zadd := c.B().Zadd().Key(k.Completed).Xx().ScoreMember()
	for _, id := range slices.Sorted(maps.Keys(at)) {
		zadd = zadd.ScoreMember(float64(at[id]), id)
	}
	do(t, c, zadd.Build())
}

func TestComplete(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		enqueue(t, s,
			store.NewJob{ID: "a", Payload: []byte("pa"), Priority: store.PriorityHigh, Unique: store.Unique{Key: "ka"}},
			job("b", "pb"), job("running", "r"))
		held := claim(t, s, 3, time.Hour).Jobs
		byID := map[string]store.Record{}
		for _, r := range held {
			byID[r.ID] = r
		}
		before := testkit.RedisNow(t, c)
		completeAll(t, s, []store.Record{byID["a"], byID["b"]}, map[string]string{"a": `{"ok":true}`})
		after := testkit.RedisNow(t, c)

		// Redis: both kept, with a finish time; a's result stored, b's
		// empty one not; claims, options and active entries gone.
		st := state(t, c, k)
		for _, id := range []string{"a", "b"} {
			inRange(t, id+"'s finish time", mustScore(t, c, k.Completed, id), before, after)
			if _, ok := st.Jobs[id]; !ok {
				t.Errorf("%s's record is gone", id)
			}
			if _, ok := st.Active[id]; ok {
				t.Errorf("%s is still active", id)
			}
			if _, ok := st.Claims[id]; ok {
				t.Errorf("%s still has a claim", id)
			}
		}
		if got := testkit.HGetAll(t, c, k.Results); !maps.Equal(got, map[string]string{"a": `{"ok":true}`}) {
			t.Errorf("results = %v, want a's only", got)
		}
		if _, ok := testkit.HGet(t, c, k.Opts, "a"); ok {
			t.Error("a's options entry is still there")
		}
		if got := historyTotals(t, c, k)["s"]; got != 2 {
			t.Errorf("history counts %d succeeded, want 2", got)
		}

		// Get and Stats.
		snap := get(t, s, "a")
		if snap.Set != store.SetCompleted || string(snap.Record.Result) != `{"ok":true}` ||
			snap.Record.Attempt != 1 || string(snap.Record.Payload) != "pa" || snap.Record.Claim != 0 {
			t.Errorf("Get(a) = %+v; want completed with its result, finish time and attempt 1", snap)
		}
		inRange(t, "a's Score", snap.Score.UnixMilli(), before, after)
		if snap := get(t, s, "b"); snap.Set != store.SetCompleted || snap.Record.Result != nil {
			t.Errorf("Get(b) = %+v; want completed without a result", snap)
		}
		if got, err := s.Stats(ctx, queue); err != nil || got.Completed != 2 || got.Active != 1 {
			t.Errorf("Stats = %+v, %v; want 2 completed, 1 active", got, err)
		}

		// The unique key is free; the id is not.
		res, err := s.EnqueueJobs(ctx, store.Target{Partition: queue, Version: -1}, []store.NewJob{
			{ID: "a"}, {ID: "other", Unique: store.Unique{Key: "ka"}},
		})
		if err != nil || res[0].Added || !res[1].Added {
			t.Errorf("Enqueue of a's id and of its unique key = %+v, %v; want [not added, added]", res, err)
		}

		// Completed jobs are left alone by what acts on other states, and
		// by a second completion.
		aTok := store.Token{ID: "a", Claim: byID["a"].Claim}
		if n, err := s.Complete(ctx, queue, []store.Completion{{Token: aTok, Result: []byte("late")}}); n != 0 || err != nil {
			t.Errorf("second Complete(a) = %d, %v; want 0", n, err)
		}
		if n, err := s.Ack(ctx, queue, []store.Token{aTok}); n != 0 || err != nil {
			t.Errorf("Ack of a completed job = %d, %v; want 0", n, err)
		}
		if r, err := s.Cancel(ctx, queue, "a"); r != store.CancelCompleted || err != nil {
			t.Errorf("Cancel(a) = %v, %v; want CancelCompleted", r, err)
		}
		if moved, err := s.Requeue(ctx, queue, store.SetDead, []string{"a", "b"}); err != nil || slices.Contains(moved, true) {
			t.Errorf("Requeue = %v, %v; want nothing moved", moved, err)
		}
		if gone, err := s.Purge(ctx, queue, store.SetDead, []string{"a", "b"}, time.Time{}); err != nil || slices.Contains(gone, true) {
			t.Errorf("Purge = %v, %v; want nothing deleted", gone, err)
		}
		if dead, err := s.DeadAmong(ctx, queue, store.SetDead, []string{"a"}); err != nil || dead[0] {
			t.Errorf("DeadAmong(a) = %v, %v; want not dead", dead, err)
		}
		if page, err := s.Dead(ctx, queue, store.DeadQuery{Limit: 10}); err != nil || len(page.Jobs) != 0 {
			t.Errorf("Dead = %+v, %v; want no dead job", page, err)
		}
		if got := get(t, s, "a"); got.Set != store.SetCompleted || string(got.Record.Result) != `{"ok":true}` || !got.Score.Equal(snap.Score) {
			t.Errorf("Get(a) after the calls = %+v; want it unchanged", got)
		}
		if n, err := s.Complete(ctx, queue, nil); n != 0 || err != nil {
			t.Errorf("Complete(nil) = %d, %v", n, err)
		}
	})
}

// TestCompleteKeepsTheStateEntry: a job that failed before it succeeded
// keeps its state entry (attempts, max, last error), and Get counts the
// attempt that succeeded.
func TestCompleteKeepsTheStateEntry(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		enqueue(t, s, store.NewJob{ID: "j", MaxAttempts: 5})
		first := claimOne(t, s, time.Hour)
		if ok, err := s.Retry(t.Context(), queue, first.Token(), 0, "boom"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		second := claimOne(t, s, time.Hour)
		completeAll(t, s, []store.Record{second}, nil)
		if st, ok := testkit.HGet(t, c, s.Keys(queue).State, "j"); !ok || st != "1;5;boom" {
			t.Errorf("state entry = %q, %v; want 1;5;boom", st, ok)
		}
		snap := get(t, s, "j")
		if snap.Record.Attempt != 2 || snap.Record.MaxAttempts != 5 || snap.Record.LastError != "boom" {
			t.Errorf("Get = %+v; want attempt 2 of 5 after boom", snap.Record)
		}
	})
}

func TestCompleteBatches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		const n = 2300
		jobs := make([]store.NewJob, n)
		for i := range jobs {
			jobs[i] = job(fmt.Sprintf("j%04d", i), "")
		}
		enqueue(t, s, jobs...)
		var done []store.Completion
		for len(done) < n {
			got := claim(t, s, store.MaxBatch, time.Hour)
			if len(got.Jobs) == 0 {
				t.Fatalf("claimed %d of %d jobs", len(done), n)
			}
			for _, r := range got.Jobs {
				done = append(done, store.Completion{Token: r.Token(), Result: []byte("result of " + r.ID)})
			}
		}
		// Stale tokens in every batch are skipped, the rest are completed.
		for i := 0; i < n; i += 500 {
			done[i].Token.Claim = 7
		}
		moved, err := s.Complete(t.Context(), queue, done)
		if err != nil || moved != n-5 {
			t.Errorf("Complete = %d, %v; want %d", moved, err, n-5)
		}
		st, err := s.Stats(t.Context(), queue)
		if err != nil || st != (store.Stats{Active: 5, Completed: n - 5}) {
			t.Errorf("Stats = %+v, %v; want 5 active, %d completed", st, err, n-5)
		}
		if got := len(testkit.HGetAll(t, c, s.Keys(queue).Results)); got != n-5 {
			t.Errorf("%d results stored, want %d", got, n-5)
		}
	})
}

func TestTrimCompleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		field := leaderField(t, s, c, queue)
		ids := []string{"old-1", "old-2", "old-3", "mid-1", "mid-2", "new-1", "new-2"}
		var jobs []store.NewJob
		for _, id := range ids {
			jobs = append(jobs, store.NewJob{ID: id, MaxAttempts: 4})
		}
		// Jobs in due, active and dead, which trimming must not touch.
		enqueue(t, s, append(jobs, job("dead", "d"), job("running", "r"))...)
		held := claim(t, s, 100, time.Hour).Jobs
		results := map[string]string{}
		var done []store.Record
		for _, r := range held {
			switch r.ID {
			case "dead":
				if ok, err := s.Kill(ctx, queue, r.Token(), "x"); !ok || err != nil {
					t.Fatalf("Kill = %v, %v", ok, err)
				}
			case "running":
			default:
				results[r.ID] = "result of " + r.ID
				done = append(done, r)
			}
		}
		enqueue(t, s, store.NewJob{ID: "later", Delay: time.Hour})
		completeAll(t, s, done, results)
		now := testkit.RedisNow(t, c)
		ago := func(d time.Duration) int64 { return now - d.Milliseconds() }
		setFinished(t, c, k, map[string]int64{
			"old-1": ago(10 * time.Hour), "old-2": ago(9 * time.Hour), "old-3": ago(8 * time.Hour),
			"mid-1": ago(3 * time.Hour), "mid-2": ago(2 * time.Hour),
			"new-1": ago(time.Minute), "new-2": ago(time.Second),
		})
		before := state(t, c, k)

		// A caller that does not lead changes nothing.
		if r, err := s.TrimCompleted(ctx, queue, "other:leader", 0, time.Minute, 100); !errors.Is(err, store.ErrNotLeader) {
			t.Errorf("TrimCompleted by a follower = %+v, %v; want ErrNotLeader", r, err)
		}
		unchanged(t, c, k, before)

		// Keep at most 2 jobs and nothing older than 5h, 2 deletions per
		// call: by age first (oldest first), then the oldest beyond the
		// count; a job's record, state entry and result go with it.
		steps := []struct {
			want    store.Trimmed
			deleted []string
		}{
			{store.Trimmed{ByAge: 2}, []string{"old-1", "old-2"}},
			{store.Trimmed{ByAge: 1, ByCount: 1}, []string{"old-3", "mid-1"}},
			{store.Trimmed{ByCount: 1}, []string{"mid-2"}},
			{store.Trimmed{}, nil},
		}
		gone := map[string]bool{}
		for i, step := range steps {
			got, err := s.TrimCompleted(ctx, queue, field, 2, 5*time.Hour, 2)
			if err != nil || got != step.want {
				t.Fatalf("step %d: TrimCompleted = %+v, %v; want %+v", i, got, err, step.want)
			}
			for _, id := range step.deleted {
				gone[id] = true
			}
			after := state(t, c, k)
			res := testkit.HGetAll(t, c, k.Results)
			for _, id := range ids {
				_, kept := testkit.ZScore(t, c, k.Completed, id)
				_, inJobs := after.Jobs[id]
				_, inState := after.State[id]
				_, inResults := res[id]
				if kept == gone[id] || inJobs == gone[id] || inState == gone[id] || inResults == gone[id] {
					t.Errorf("step %d: %s completed %v, record %v, state %v, result %v; want deleted %v",
						i, id, kept, inJobs, inState, inResults, gone[id])
				}
			}
			if !maps.Equal(after.Due, before.Due) || !maps.Equal(after.Active, before.Active) || !maps.Equal(after.Dead, before.Dead) {
				t.Errorf("step %d: due/active/dead changed:\nbefore %v\nafter  %v", i, before, after)
			}
			for _, id := range []string{"running", "later", "dead"} {
				if after.Jobs[id] != before.Jobs[id] {
					t.Errorf("step %d: record of %s changed", i, id)
				}
			}
		}
		// A trimmed job's id is free again.
		enqueue(t, s, job("old-1", "again"))

		// No age bound: only the count; count 0 empties the set.
		if got, err := s.TrimCompleted(ctx, queue, field, 1, 0, 100); err != nil || got != (store.Trimmed{ByCount: 1}) {
			t.Errorf("TrimCompleted(max 1, no age) = %+v, %v; want 1 by count", got, err)
		}
		if got, err := s.TrimCompleted(ctx, queue, field, 0, 0, 100); err != nil || got != (store.Trimmed{ByCount: 1}) {
			t.Errorf("TrimCompleted(max 0, no age) = %+v, %v; want 1 by count", got, err)
		}
		if st, err := s.Stats(ctx, queue); err != nil || st.Completed != 0 || testkit.Exists(t, c, k.Results) {
			t.Errorf("after trimming to 0: Stats %+v, %v, results key left %v", st, err, testkit.Exists(t, c, k.Results))
		}
	})
}

func TestListCompleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		ids := []string{"a", "b", "c", "d", "e", "f", "g"}
		var jobs []store.NewJob
		for _, id := range ids {
			jobs = append(jobs, job(id, "payload of "+id))
		}
		enqueue(t, s, jobs...)
		results := map[string]string{"a": "ra", "c": "rc", "d": "rd", "g": "rg"}
		completeAll(t, s, claim(t, s, 10, time.Hour).Jobs, results)
		// Finish times: ties are ordered by id, descending too.
		now := testkit.RedisNow(t, c)
		setFinished(t, c, k, map[string]int64{"a": now - 500, "b": now - 400, "c": now - 400, "d": now - 300,
			"e": now - 200, "f": now - 200, "g": now - 100})
		want := []string{"g", "f", "e", "d", "c", "b", "a"}
		for _, limit := range []int{1, 2, 3, 7, 100} {
			got := walkList(t, s, store.ListCompleted, limit, 0)
			if !slices.Equal(listedIDs(got), want) {
				t.Errorf("limit %d: listed %v, want %v", limit, listedIDs(got), want)
			}
			for _, j := range got {
				r := j.Record
				if j.Err != nil || string(r.Result) != results[r.ID] || r.Attempt != 1 ||
					string(r.Payload) != "payload of "+r.ID {
					t.Errorf("limit %d: listed %+v (score %v, err %v)", limit, r, j.Score, j.Err)
				}
			}
		}

		// A page resumes after its cursor when the cursor's job is gone.
		page, err := s.List(ctx, queue, store.ListQuery{What: store.ListCompleted, Limit: 3})
		if err != nil || !slices.Equal(listedIDs(page.Jobs), want[:3]) || page.Next.ID != "e" {
			t.Fatalf("first page = %v (next %+v), %v", listedIDs(page.Jobs), page.Next, err)
		}
		field := leaderField(t, s, c, queue)
		do(t, c, c.B().Zadd().Key(k.Completed).Xx().ScoreMember().ScoreMember(float64(now-1000), "e").Build()) // e: now the oldest
		if r, err := s.TrimCompleted(ctx, queue, field, 6, 0, 1); err != nil || r.ByCount != 1 {
			t.Fatalf("TrimCompleted = %+v, %v", r, err)
		}
		page, err = s.List(ctx, queue, store.ListQuery{What: store.ListCompleted, Limit: 10, After: page.Next})
		if err != nil || !slices.Equal(listedIDs(page.Jobs), want[3:]) || !page.Next.IsZero() {
			t.Errorf("page after a trimmed cursor = %v (next %+v), %v; want %v", listedIDs(page.Jobs), page.Next, err, want[3:])
		}

		// Results count in the page's bytes.
		big := string(make([]byte, 1000))
		enqueue(t, s, job("big", ""))
		completeAll(t, s, claim(t, s, 1, time.Hour).Jobs, map[string]string{"big": big})
		page, err = s.List(ctx, queue, store.ListQuery{What: store.ListCompleted, Limit: 10, MaxBytes: 1000})
		if err != nil || !slices.Equal(listedIDs(page.Jobs), []string{"big"}) || page.Next.ID != "big" {
			t.Errorf("page of 1000 bytes = %v (next %+v), %v; want big alone", listedIDs(page.Jobs), page.Next, err)
		}
	})
}

// TestForgetCompleted: completed jobs keep no queue in use; forgetting the
// queue deletes them with their records and results. Any other job keeps
// it.
func TestForgetCompleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		if err := s.AddQueues(ctx, queue); err != nil {
			t.Fatal(err)
		}
		enqueue(t, s, job("a", ""), job("b", ""), job("waiting", ""))
		held := claim(t, s, 2, time.Hour).Jobs
		completeAll(t, s, held, map[string]string{"a": "ra"})

		use, err := s.QueueUse(ctx, queue)
		if err != nil || use.Records != 1 || use.Stats.Completed != 2 || !use.InUse() {
			t.Fatalf("QueueUse with a waiting job = %+v, %v; want 1 record beyond the completed, in use", use, err)
		}
		if ok, err := s.ForgetQueue(ctx, queue); ok || err != nil {
			t.Fatalf("ForgetQueue with a waiting job = %v, %v; want refused", ok, err)
		}
		waiting := claimOne(t, s, time.Hour)
		completeAll(t, s, []store.Record{waiting}, nil)

		use, err = s.QueueUse(ctx, queue)
		if err != nil || use.Records != 0 || use.Stats.Completed != 3 || use.InUse() {
			t.Fatalf("QueueUse with completed jobs only = %+v, %v; want not in use", use, err)
		}
		if ok, err := s.ForgetQueue(ctx, queue); !ok || err != nil {
			t.Fatalf("ForgetQueue with completed jobs only = %v, %v; want forgotten", ok, err)
		}
		for _, key := range []string{k.Jobs, k.Completed, k.Results, k.State, k.Active, k.Claims} {
			if testkit.Exists(t, c, key) {
				t.Errorf("%s is still there", key)
			}
		}
	})
}

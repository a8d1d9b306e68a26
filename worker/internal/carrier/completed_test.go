package carrier

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// completeJobs enqueues n jobs to testQueue, claims them and completes
// them, each with a result.
func completeJobs(t *testing.T, st *store.Store, from, n int) {
	t.Helper()
	jobs := make([]store.NewJob, n)
	for i := range jobs {
		jobs[i] = store.NewJob{ID: fmt.Sprintf("j%03d", from+i)}
	}
	if _, err := st.Enqueue(t.Context(), testQueue, jobs); err != nil {
		t.Fatal(err)
	}
	c, err := st.Claim(t.Context(), testQueue, n, time.Hour)
	if err != nil || len(c.Jobs) != n {
		t.Fatalf("Claim = %d jobs, %v; want %d", len(c.Jobs), err, n)
	}
	done := make([]store.Completion, n)
	for i, r := range c.Jobs {
		done[i] = store.Completion{Token: r.Token(), Result: []byte("result of " + r.ID)}
	}
	if moved, err := st.Complete(t.Context(), testQueue, done); err != nil || moved != n {
		t.Fatalf("Complete = %d, %v; want %d", moved, err, n)
	}
}

func completedCount(t *testing.T, st *store.Store) int64 {
	t.Helper()
	s, err := st.Stats(t.Context(), testQueue)
	if err != nil {
		t.Fatal(err)
	}
	return s.Completed
}

// TestLeaderTrimsTheCompletedSet: the leader of a queue that retains
// completed jobs keeps its completed set within the count, at once when
// its term begins and every CompletedTrimInterval after, keeping the
// newest.
func TestLeaderTrimsTheCompletedSet(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	rdb := testkit.Single(t)
	st := store.New(rdb, prefix, nil)
	completeJobs(t, st, 0, 5)

	startNode(t, prefix, "a", []Queue{{Name: testQueue, MaxAttempts: 3, CompletedMaxJobs: 2, CompletedMaxAge: time.Hour}},
		Config{CompletedTrimInterval: 20 * time.Millisecond})
	testkit.Eventually(t, 10*time.Second, "the leader to trim the completed set to 2", func() bool {
		return completedCount(t, st) == 2
	})
	completeJobs(t, st, 5, 4)
	testkit.Eventually(t, 5*time.Second, "the leader to trim the jobs completed while it leads", func() bool {
		return completedCount(t, st) == 2
	})
	for _, id := range []string{"j007", "j008"} {
		if _, ok := testkit.ZScore(t, rdb, st.Keys(testQueue).Completed, id); !ok {
			t.Errorf("%s, one of the newest, was trimmed", id)
		}
	}
}

// TestLeaderDeletesCompletedJobsNoLongerRetained: a queue that retains
// none has its leftover completed jobs (kept while it retained some)
// deleted at the start of a term, and no trim runs after that.
func TestLeaderDeletesCompletedJobsNoLongerRetained(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	rdb := testkit.Single(t)
	st := store.New(rdb, prefix, nil)
	completeJobs(t, st, 0, 3)

	n := startNode(t, prefix, "a", []Queue{{Name: testQueue, MaxAttempts: 3}}, Config{CompletedTrimInterval: 10 * time.Millisecond})
	testkit.Eventually(t, 10*time.Second, "the leader to delete the completed jobs", func() bool {
		return completedCount(t, st) == 0
	})
	// Completed later (by a process that still retains them): no trim
	// deletes them while this term lasts.
	completeJobs(t, st, 3, 2)
	<-time.After(20 * 10 * time.Millisecond)
	if got := completedCount(t, st); got != 2 || !n.c.Leading(testQueue) {
		t.Errorf("completed = %d (leading %v) 20 intervals later; want 2: a queue that retains none trims only at a term's start", got, n.c.Leading(testQueue))
	}
}

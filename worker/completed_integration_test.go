package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// resultHandler sets the result {"ok":true}, or for a job whose payload is
// "big" one over the limit, and reports what SetResult returned.
func resultHandler(errs chan<- error) worker.HandlerFunc {
	return func(_ context.Context, job *worker.Job) error {
		res := []byte(`{"ok":true}`)
		if string(job.Payload) == "big" {
			res = []byte(strings.Repeat("x", 100))
		}
		err := job.SetResult(res)
		if errs != nil {
			errs <- err
		}
		return nil
	}
}

// TestRetainCompleted: a queue with RetainCompleted keeps its finished
// jobs with their results and finish times, where Get, List and Stats show
// them; its id stays taken, Cancel refuses it, and the leader trims the
// oldest beyond the count. A result over Config.MaxResultBytes is refused
// by SetResult, and the job completes without it.
func TestRetainCompleted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		ctx := t.Context()
		cfg := testConfig(t, prefix)
		cfg.MaxResultBytes = 64
		errs := make(chan error, 16)
		reg := register(t, nil, "done", resultHandler(errs), worker.QueueOptions{RetainCompleted: worker.Retention{Count: 3}})
		startDaemon(t, rdb, reg, cfg)
		c := newClient(t, rdb, cfg)

		before := time.Now()
		first := enqueue(t, c, worker.JobSpec{Queue: "done", ID: "first", Payload: []byte("p")})
		testkit.Eventually(t, 10*time.Second, "the job to complete", func() bool { return inState(t, c, "done", first, worker.StateCompleted) })
		if err := receive(t, errs, time.Second, "SetResult's error"); err != nil {
			t.Errorf("SetResult of 11 bytes: %v", err)
		}
		job := getJob(t, c, "done", first)
		if string(job.Result) != `{"ok":true}` || job.FinishedAt.Before(before.Add(-time.Second)) || job.FinishedAt.After(time.Now().Add(time.Second)) ||
			job.Attempt != 1 || string(job.Payload) != "p" || !job.LeaseUntil.IsZero() || job.Worker != "" {
			t.Errorf("Get = %+v; want completed with its result, finish time and attempt 1", job)
		}
		if s := stats(t, c, "done"); s.Completed != 1 || s.Active+s.Ready+s.Dead != 0 {
			t.Errorf("Stats = %+v; want 1 completed", s)
		}
		if _, err := c.Enqueue(ctx, worker.JobSpec{Queue: "done", ID: first}); !errors.Is(err, worker.ErrDuplicate) {
			t.Errorf("Enqueue of a completed job's id = %v; want ErrDuplicate", err)
		}
		if err := c.Cancel(ctx, "done", first); !errors.Is(err, worker.ErrNotFound) || !strings.Contains(err.Error(), "completed") {
			t.Errorf("Cancel of a completed job = %v; want ErrNotFound saying it is completed", err)
		}

		// A result over the limit: refused, and the job completes without.
		big := enqueue(t, c, worker.JobSpec{Queue: "done", ID: "big", Payload: []byte("big")})
		testkit.Eventually(t, 10*time.Second, "the big job to complete", func() bool { return inState(t, c, "done", big, worker.StateCompleted) })
		var ve *worker.ValidationError
		if err := receive(t, errs, time.Second, "SetResult's error"); !errors.As(err, &ve) || ve.Field != "Result" {
			t.Errorf("SetResult of 100 bytes over a limit of 64 = %v; want a ValidationError naming Result", err)
		}
		if job := getJob(t, c, "done", big); job.Result != nil {
			t.Errorf("the big job's result = %q; want none", job.Result)
		}

		// Five more, one after the other: the leader keeps the 3 newest.
		for i := 1; i <= 5; i++ {
			id := enqueue(t, c, worker.JobSpec{Queue: "done", ID: fmt.Sprintf("j%d", i)})
			testkit.Eventually(t, 10*time.Second, id+" to complete", func() bool { return inState(t, c, "done", id, worker.StateCompleted) })
			receive(t, errs, time.Second, "SetResult's error")
		}
		testkit.Eventually(t, 10*time.Second, "the leader to trim to 3", func() bool { return stats(t, c, "done").Completed == 3 })
		jobs, sizes := listAll(t, c, admin.JobListParams{Queue: "done", State: worker.StateCompleted, Limit: 2})
		if got := jobIDs(jobs); !slices.Equal(got, []string{"j5", "j4", "j3"}) || !slices.Equal(sizes, []int{2, 1}) {
			t.Errorf("List(completed) = %v in pages of %v; want [j5 j4 j3], newest first, in pages of [2 1]", got, sizes)
		}
		for i, j := range jobs {
			if j.State != worker.StateCompleted || string(j.Result) != `{"ok":true}` || j.FinishedAt.IsZero() ||
				(i > 0 && j.FinishedAt.After(jobs[i-1].FinishedAt)) {
				t.Errorf("listed %+v; want completed with its result, newest first", j)
			}
		}
		for _, id := range []string{first, big, "j1", "j2"} {
			if !isGone(t, c, "done", id) {
				t.Errorf("%s was not trimmed", id)
			}
		}
		// A trimmed job's id is free again.
		enqueue(t, c, worker.JobSpec{Queue: "done", ID: first})
	})
}

// TestRetainCompletedPartitioned: a queue of three partitions retains its
// count across them (a third each), and List and Stats read them all.
func TestRetainCompletedPartitioned(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		reg := register(t, nil, "parted", resultHandler(nil), worker.QueueOptions{Partitions: 3, RetainCompleted: worker.Retention{Count: 6}})
		startDaemon(t, rdb, reg, cfg)
		c := newClient(t, rdb, cfg)
		waitPartitions(t, c, "parted", 3)

		// Three jobs for each partition: the leaders keep two of each.
		per := map[int]int{}
		var ids []string
		for i := 0; len(ids) < 9; i++ {
			id := fmt.Sprintf("p%d", i)
			if p := rediskeys.PartitionOf(id, 3); per[p] < 3 {
				per[p]++
				ids = append(ids, id)
			}
		}
		for _, id := range ids {
			enqueue(t, c, worker.JobSpec{Queue: "parted", ID: id})
		}
		testkit.EventuallyState(t, 15*time.Second, func() (bool, string) {
			s := stats(t, c, "parted")
			return s.Completed == 6 && s.Ready+s.Active+s.Scheduled == 0, fmt.Sprintf("every job to finish and the leaders to trim to 2 each: %+v", s)
		})
		jobs, _ := listAll(t, c, admin.JobListParams{Queue: "parted", State: worker.StateCompleted, Limit: 4})
		kept := map[int]int{}
		for _, j := range jobs {
			kept[rediskeys.PartitionOf(j.ID, 3)]++
			if j.State != worker.StateCompleted || string(j.Result) != `{"ok":true}` || j.FinishedAt.IsZero() {
				t.Errorf("listed %+v; want completed with its result", j)
			}
			if got := getJob(t, c, "parted", j.ID); got.State != worker.StateCompleted || string(got.Result) != `{"ok":true}` {
				t.Errorf("Get(%s) = %+v", j.ID, got)
			}
		}
		if len(jobs) != 6 || kept[0] != 2 || kept[1] != 2 || kept[2] != 2 {
			t.Errorf("listed %v, by partition %v; want 2 in each of 3", jobIDs(jobs), kept)
		}
	})
}

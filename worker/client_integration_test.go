package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

func TestClientEnqueueGet(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		runAt := time.Now().Add(90 * time.Minute)
		tests := []struct {
			name      string
			spec      worker.JobSpec
			wantState worker.State
			// wantRunAt returns the bounds of RunAt given the local clock
			// just before and after Enqueue.
			wantRunAt func(before, after time.Time) (lo, hi time.Time)
		}{
			{
				name:      "ready binary payload",
				spec:      worker.JobSpec{Queue: "q", Payload: allBytes()},
				wantState: worker.StateReady,
				wantRunAt: func(b, a time.Time) (time.Time, time.Time) { return b, a },
			},
			{
				name:      "ready empty payload",
				spec:      worker.JobSpec{Queue: "q", ID: "empty"},
				wantState: worker.StateReady,
				wantRunAt: func(b, a time.Time) (time.Time, time.Time) { return b, a },
			},
			{
				name:      "delay",
				spec:      worker.JobSpec{Queue: "q", Payload: []byte("later"), Delay: time.Hour, MaxAttempts: 7, Timeout: 3 * time.Second},
				wantState: worker.StateScheduled,
				wantRunAt: func(b, a time.Time) (time.Time, time.Time) { return b.Add(time.Hour), a.Add(time.Hour) },
			},
			{
				name:      "run at",
				spec:      worker.JobSpec{Queue: "q", ID: "at:1", Payload: []byte("at"), RunAt: runAt},
				wantState: worker.StateScheduled,
				wantRunAt: func(time.Time, time.Time) (time.Time, time.Time) {
					ms := time.UnixMilli(runAt.UnixMilli())
					return ms, ms
				},
			},
			{
				name:      "run at in the past",
				spec:      worker.JobSpec{Queue: "q", RunAt: time.UnixMilli(1_000_000)},
				wantState: worker.StateReady,
				wantRunAt: func(time.Time, time.Time) (time.Time, time.Time) {
					return time.UnixMilli(1_000_000), time.UnixMilli(1_000_000)
				},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				before := time.Now()
				id := enqueue(t, c, tt.spec)
				after := time.Now()
				if tt.spec.ID != "" && id != tt.spec.ID {
					t.Errorf("Enqueue returned id %q, want %q", id, tt.spec.ID)
				}
				if tt.spec.ID == "" && len(id) != 26 {
					t.Errorf("generated id %q has %d characters, want 26", id, len(id))
				}
				job := getJob(t, c, tt.spec.Queue, id)
				if job.ID != id || job.Queue != tt.spec.Queue {
					t.Errorf("Get: id %q queue %q, want %q %q", job.ID, job.Queue, id, tt.spec.Queue)
				}
				if job.State != tt.wantState {
					t.Errorf("State = %s, want %s", job.State, tt.wantState)
				}
				if job.Attempt != 0 || job.LastError != "" {
					t.Errorf("Attempt %d LastError %q, want 0 and none", job.Attempt, job.LastError)
				}
				if job.MaxAttempts != tt.spec.MaxAttempts || job.Timeout != tt.spec.Timeout {
					t.Errorf("MaxAttempts %d Timeout %s, want %d %s", job.MaxAttempts, job.Timeout, tt.spec.MaxAttempts, tt.spec.Timeout)
				}
				if !bytes.Equal(job.Payload, tt.spec.Payload) {
					t.Errorf("Payload = %q, want %q", job.Payload, tt.spec.Payload)
				}
				lo, hi := tt.wantRunAt(before, after)
				if lo.Equal(hi) {
					if !job.RunAt.Equal(lo) {
						t.Errorf("RunAt = %s, want exactly %s", job.RunAt, lo)
					}
				} else {
					within(t, "RunAt", job.RunAt, lo, hi)
				}
				within(t, "EnqueuedAt", job.EnqueuedAt, before, after)
				if !job.LeaseUntil.IsZero() || !job.DiedAt.IsZero() {
					t.Errorf("LeaseUntil %s DiedAt %s, want both zero", job.LeaseUntil, job.DiedAt)
				}
			})
		}
	})
}

func TestClientGeneratedIDsIncrease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		var ids []string
		for range 50 {
			ids = append(ids, enqueue(t, c, worker.JobSpec{Queue: "q"}))
		}
		specs := make([]worker.JobSpec, 50)
		for i := range specs {
			specs[i] = worker.JobSpec{Queue: "q"}
		}
		res, err := c.EnqueueMany(t.Context(), specs)
		if err != nil {
			t.Fatalf("EnqueueMany: %v", err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("EnqueueMany job %q: %v", r.ID, r.Err)
			}
			ids = append(ids, r.ID)
		}
		for i, id := range ids {
			if len(id) != 26 {
				t.Errorf("id %q has %d characters, want 26", id, len(id))
			}
			if i > 0 && id <= ids[i-1] {
				t.Errorf("id %d %q does not sort after %q", i, id, ids[i-1])
			}
		}
		if s := stats(t, c, "q"); s.Ready != 100 {
			t.Errorf("Stats = %+v, want 100 ready", s)
		}
	})
}

func TestClientDuplicate(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		runAt := time.Now().Add(time.Hour)
		enqueue(t, c, worker.JobSpec{Queue: "q", ID: "order-1", Payload: []byte("first"), RunAt: runAt})

		id, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", ID: "order-1", Payload: []byte("second")})
		if !errors.Is(err, worker.ErrDuplicate) {
			t.Fatalf("second Enqueue: err = %v, want ErrDuplicate", err)
		}
		if id != "order-1" {
			t.Errorf("second Enqueue returned id %q, want order-1", id)
		}
		job := getJob(t, c, "q", "order-1")
		if string(job.Payload) != "first" || job.RunAt.UnixMilli() != runAt.UnixMilli() || job.State != worker.StateScheduled {
			t.Errorf("first job changed: payload %q run-at %s state %s", job.Payload, job.RunAt, job.State)
		}

		// The same id in another queue is another job.
		enqueue(t, c, worker.JobSpec{Queue: "other", ID: "order-1"})

		// A cancelled job keeps its id; once it is purged, the id can be
		// used again.
		if err := c.Cancel(t.Context(), "q", "order-1"); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		if _, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", ID: "order-1"}); !errors.Is(err, worker.ErrDuplicate) {
			t.Fatalf("Enqueue of a cancelled job's id: err = %v, want ErrDuplicate", err)
		}
		if res, err := c.Op.Triage(t.Context(), admin.TriageParams{Queue: "q", State: worker.StateCancelled, Action: admin.TriagePurge, IDs: []string{"order-1"}}); err != nil || res.Changed != 1 {
			t.Fatalf("purge of the cancelled job: %+v, %v", res, err)
		}
		enqueue(t, c, worker.JobSpec{Queue: "q", ID: "order-1", Payload: []byte("third")})
		if job := getJob(t, c, "q", "order-1"); string(job.Payload) != "third" || job.State != worker.StateReady {
			t.Errorf("re-enqueued job: payload %q state %s, want third ready", job.Payload, job.State)
		}
	})
}

func TestClientEnqueueManyBatches(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		const n = 2500
		queueOf := func(i int) string {
			if i%3 == 0 {
				return "q2"
			}
			return "q1"
		}
		idOf := func(i int) string { return fmt.Sprintf("job-%04d", i) }
		// job-0003 (queue q2) exists before the batch.
		const existing, repeated = 3, 2401
		enqueue(t, c, worker.JobSpec{Queue: queueOf(existing), ID: idOf(existing), Payload: []byte("before")})

		specs := make([]worker.JobSpec, n)
		want := map[string]int64{}
		for i := range specs {
			specs[i] = worker.JobSpec{Queue: queueOf(i), ID: idOf(i), Payload: []byte(fmt.Sprint("p-", i))}
			want[queueOf(i)]++
		}
		// Index 2401 repeats job-0001 of queue q1: the first copy is in the
		// queue's first script call of 1,000 jobs, the repeat in its second.
		if queueOf(repeated) != queueOf(1) {
			t.Fatal("test set-up: the repeated id must stay in its queue")
		}
		specs[repeated].ID = idOf(1)
		want[queueOf(repeated)]-- // the repeat is not stored; job-0003 was stored before

		res, err := c.EnqueueMany(t.Context(), specs)
		if err != nil {
			t.Fatalf("EnqueueMany: %v", err)
		}
		if len(res) != n {
			t.Fatalf("EnqueueMany returned %d results, want %d", len(res), n)
		}
		var dups []int
		for i, r := range res {
			if r.ID != specs[i].ID {
				t.Errorf("result %d: id %q, want %q", i, r.ID, specs[i].ID)
			}
			switch {
			case r.Err == nil:
			case errors.Is(r.Err, worker.ErrDuplicate):
				dups = append(dups, i)
			default:
				t.Errorf("result %d: unexpected error %v", i, r.Err)
			}
		}
		if !slices.Equal(dups, []int{existing, repeated}) {
			t.Errorf("duplicates at %v, want [%d %d]", dups, existing, repeated)
		}
		for q, w := range want {
			if s := stats(t, c, q); s != (admin.QueueStats{Ready: w}) {
				t.Errorf("Stats(%s) = %+v, want %d ready", q, s, w)
			}
		}
		for id, payload := range map[string]string{idOf(1): "p-1", idOf(existing): "before", idOf(n - 1): fmt.Sprint("p-", n-1)} {
			i := slices.IndexFunc(specs, func(s worker.JobSpec) bool { return s.ID == id })
			if got := getJob(t, c, queueOf(i), id); string(got.Payload) != payload {
				t.Errorf("job %s: payload %q, want %q", id, got.Payload, payload)
			}
		}
	})
}

func TestClientInvalid(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.MaxPayloadBytes = 1024
		c := newClient(t, rdb, cfg)
		now := time.Now()
		tests := []struct {
			name  string
			spec  worker.JobSpec
			field string
		}{
			{"empty queue name", worker.JobSpec{}, "Queue"},
			{"queue name with a space", worker.JobSpec{Queue: "my queue"}, "Queue"},
			{"queue name with a brace", worker.JobSpec{Queue: "q}x"}, "Queue"},
			{"id with a space", worker.JobSpec{Queue: "q", ID: "a b"}, "ID"},
			{"payload over the limit", worker.JobSpec{Queue: "q", Payload: make([]byte, 1025)}, "Payload"},
			{"negative delay", worker.JobSpec{Queue: "q", Delay: -time.Second}, "Delay"},
			{"run at two years ahead", worker.JobSpec{Queue: "q", RunAt: now.AddDate(2, 0, 0)}, "RunAt"},
			{"max attempts -1", worker.JobSpec{Queue: "q", MaxAttempts: -1}, "MaxAttempts"},
			{"delay and run at", worker.JobSpec{Queue: "q", Delay: time.Second, RunAt: now.Add(time.Minute)}, "RunAt"},
			{"negative timeout", worker.JobSpec{Queue: "q", Timeout: -time.Second}, "Timeout"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := c.Enqueue(t.Context(), tt.spec)
				checkInvalid(t, err, tt.field, "")

				// One bad spec among good ones: nothing is written.
				good := worker.JobSpec{Queue: "q", Payload: []byte("good")}
				other := worker.JobSpec{Queue: "other", ID: "x"}
				_, err = c.EnqueueMany(t.Context(), []worker.JobSpec{good, other, tt.spec, good})
				checkInvalid(t, err, tt.field, "specs[2]")
			})
		}
		// Reads and moves check their arguments too.
		ctx := t.Context()
		refs := []struct {
			name  string
			err   error
			field string
		}{
			{"Get bad queue", second(c.Get(ctx, "bad queue", "x")), "Queue"},
			{"Get bad id", second(c.Get(ctx, "q", "bad id")), "ID"},
			{"Cancel bad queue", c.Cancel(ctx, "", "x"), "Queue"},
			{"Cancel bad id", c.Cancel(ctx, "q", "x\ty"), "ID"},
			{"Requeue bad queue", second(c.Requeue(ctx, "q{1}", "x")), "Queue"},
			{"Requeue bad id", second(c.Requeue(ctx, "q", "ok", "")), "IDs[1]"},
			{"Stats bad queue", second(c.Stats(ctx, "a:b")), "Queue"},
		}
		for _, r := range refs {
			t.Run(r.name, func(t *testing.T) { checkInvalid(t, r.err, r.field, "") })
		}
		for _, q := range []string{"q", "other"} {
			if s := stats(t, c, q); s != (admin.QueueStats{}) {
				t.Errorf("Stats(%s) = %+v after refused enqueues, want all zero", q, s)
			}
		}
		if qs, err := c.AllQueues(t.Context()); err != nil || len(qs) != 0 {
			t.Errorf("Queues = %v, %v; want none recorded", qs, err)
		}
		// The limit itself is allowed.
		id := enqueue(t, c, worker.JobSpec{Queue: "edge", Payload: make([]byte, 1024)})
		if job := getJob(t, c, "edge", id); len(job.Payload) != 1024 {
			t.Errorf("payload of %d bytes stored, want 1024", len(job.Payload))
		}
	})
}

func TestClientCancel(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		started := make(chan string, 1)
		ended := make(chan error, 1)
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			switch string(job.Payload) {
			case "block":
				started <- job.ID
				<-ctx.Done()
				ended <- context.Cause(ctx)
				return nil // ignored: the job was cancelled
			case "die":
				return worker.Permanent(errors.New("nope"))
			}
			return nil
		})
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)

		// The "idle" queue has no handler, so its jobs stay put.
		scheduled := enqueue(t, c, worker.JobSpec{Queue: "idle", Delay: time.Hour})
		ready := enqueue(t, c, worker.JobSpec{Queue: "idle"})

		running := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("block")})
		receive(t, started, 10*time.Second, "the blocking job to start")
		dead := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("die")})
		testkit.Eventually(t, 10*time.Second, "the failing job to die", func() bool { return inState(t, c, "q", dead, worker.StateDead) })

		tests := []struct {
			name      string
			queue, id string
			want      error // nil = cancelled
			wantState worker.State
		}{
			{"scheduled", "idle", scheduled, nil, worker.StateCancelled},
			{"ready", "idle", ready, nil, worker.StateCancelled},
			{"dead", "q", dead, worker.ErrJobDead, worker.StateDead},
			{"unknown", "q", "no-such-job", worker.ErrNotFound, ""},
			{"unknown queue", "nothing-here", running, worker.ErrNotFound, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := c.Cancel(t.Context(), tt.queue, tt.id)
				if !errors.Is(err, tt.want) { // errors.Is(nil, nil) holds
					t.Fatalf("Cancel = %v, want %v", err, tt.want)
				}
				if tt.wantState == "" {
					if !isGone(t, c, tt.queue, tt.id) {
						t.Errorf("job exists after Cancel")
					}
				} else if job := getJob(t, c, tt.queue, tt.id); job.State != tt.wantState {
					t.Errorf("State after Cancel = %s, want %s", job.State, tt.wantState)
				}
				if err := c.Cancel(t.Context(), tt.queue, tt.id); !errors.Is(err, tt.want) {
					t.Errorf("second Cancel = %v, want %v", err, tt.want)
				}
			})
		}
		if s := stats(t, c, "idle"); s != (admin.QueueStats{Cancelled: 2}) {
			t.Errorf("Stats(idle) = %+v, want 2 cancelled", s)
		}
		if j := getJob(t, c, "idle", scheduled); j.FinishedAt.IsZero() || j.Attempt != 0 || j.LastError != "" {
			t.Errorf("cancelled before it started: %+v; want its cancel time, no attempt, no error", j)
		}
		if n, err := c.RequeueCancelled(t.Context(), "idle", scheduled, ready, "no-such-job"); err != nil || n != 2 {
			t.Errorf("requeue of the cancelled = %d, %v; want 2", n, err)
		}
		if j := getJob(t, c, "idle", ready); j.State != worker.StateReady {
			t.Errorf("requeued cancelled job is %s, want ready", j.State)
		}

		// A running job: its handler's context ends with ErrCancelled, and
		// it stays cancelled with the last error "cancelled" although the
		// handler returned nil.
		if err := c.Cancel(t.Context(), "q", running); err != nil {
			t.Fatalf("Cancel(running) = %v", err)
		}
		select {
		case cause := <-ended:
			if !errors.Is(cause, worker.ErrCancelled) {
				t.Errorf("handler's context cause %v, want ErrCancelled", cause)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the handler's context did not end after Cancel")
		}
		job := getJob(t, c, "q", running)
		if job.State != worker.StateCancelled || job.LastError != "cancelled" || job.Attempt != 1 {
			t.Errorf("cancelled job: state %s, last error %q, attempt %d; want cancelled, cancelled, 1", job.State, job.LastError, job.Attempt)
		}
		if err := c.Cancel(t.Context(), "q", running); err != nil {
			t.Errorf("second Cancel of the running job = %v, want nil (cancelled already)", err)
		}
		// The handler's nil, returned after the cancel, changed nothing.
		<-time.After(200 * time.Millisecond)
		if job := getJob(t, c, "q", running); job.State != worker.StateCancelled {
			t.Errorf("cancelled job is %s after its handler returned, want cancelled", job.State)
		}
	})
}

func TestClientRequeue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		failing := worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
			if string(job.Payload) == "permanent" {
				return worker.Permanent(errors.New("nope"))
			}
			return errors.New("out of luck")
		})
		// d1 fails permanently with attempts left; d2 uses up its only one.
		opts := worker.QueueOptions{MaxAttempts: 2, Backoff: worker.FixedSteps{0}}
		d := startDaemon(t, rdb, register(t, nil, "q", failing, opts), cfg)
		enqueue(t, c, worker.JobSpec{Queue: "q", ID: "d1", Payload: []byte("permanent")})
		enqueue(t, c, worker.JobSpec{Queue: "q", ID: "d2", MaxAttempts: 1})
		testkit.Eventually(t, 10*time.Second, "both jobs to die", func() bool {
			return inState(t, c, "q", "d1", worker.StateDead) && inState(t, c, "q", "d2", worker.StateDead)
		})
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatalf("Run: %v", err)
		}
		scheduled := enqueue(t, c, worker.JobSpec{Queue: "q", Delay: time.Hour})

		before := time.Now()
		n, err := c.Requeue(t.Context(), "q", "d1", "no-such-job", scheduled)
		after := time.Now()
		if err != nil || n != 1 {
			t.Fatalf("Requeue = %d, %v; want 1, nil", n, err)
		}
		job := getJob(t, c, "q", "d1")
		if job.State != worker.StateReady || job.Attempt != 0 || job.LastError != "permanent: nope" {
			t.Errorf("requeued job: state %s attempt %d last error %q; want ready, 0, %q", job.State, job.Attempt, job.LastError, "permanent: nope")
		}
		within(t, "RunAt of the requeued job", job.RunAt, before, after)
		if job := getJob(t, c, "q", scheduled); job.State != worker.StateScheduled {
			t.Errorf("Requeue moved a scheduled job: state %s", job.State)
		}
		if n, err := c.Requeue(t.Context(), "q", "d1"); err != nil || n != 0 {
			t.Errorf("Requeue of a job no longer dead = %d, %v; want 0, nil", n, err)
		}
		if s := stats(t, c, "q"); s != (admin.QueueStats{Scheduled: 1, Ready: 1, Dead: 1}) {
			t.Errorf("Stats = %+v, want 1 scheduled, 1 ready, 1 dead", s)
		}

		// A new daemon runs the requeued job with a fresh set of attempts.
		rec := newRecorder()
		ok := rec.Handler(func(context.Context, *worker.Job) error { return nil })
		startDaemon(t, rdb, register(t, nil, "q", ok, opts), cfg)
		calls := rec.WaitCalls(t, "d1", 1, 10*time.Second)
		if calls[0].Attempt != 1 || calls[0].LastError != "permanent: nope" {
			t.Errorf("handler saw attempt %d last error %q; want 1, %q", calls[0].Attempt, calls[0].LastError, "permanent: nope")
		}
		testkit.Eventually(t, 10*time.Second, "the requeued job to be acked", func() bool { return isGone(t, c, "q", "d1") })
		if !inState(t, c, "q", "d2", worker.StateDead) {
			t.Error("the job not requeued left the dead set")
		}
	})
}

func TestClientStats(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		st := store.New(rdb, prefix, nil)
		ctx := t.Context()

		// Two jobs claimed as a worker would; one of them then fails for good.
		enqueue(t, c, worker.JobSpec{Queue: "q", ID: "active"})
		enqueue(t, c, worker.JobSpec{Queue: "q", ID: "dead"})
		claimed, err := st.Claim(ctx, "q", 2, time.Minute)
		if err != nil || len(claimed.Jobs) != 2 {
			t.Fatalf("Claim = %+v, %v; want 2 jobs", claimed, err)
		}
		for _, r := range claimed.Jobs {
			if r.ID == "dead" {
				if ok, err := st.Kill(ctx, "q", r.Token(), "killed by the test"); !ok || err != nil {
					t.Fatalf("Kill = %v, %v", ok, err)
				}
			}
		}
		for range 3 {
			enqueue(t, c, worker.JobSpec{Queue: "q"})
		}
		enqueue(t, c, worker.JobSpec{Queue: "q", Delay: time.Hour})
		enqueue(t, c, worker.JobSpec{Queue: "q", ID: "later", RunAt: time.Now().Add(2 * time.Hour)})

		want := admin.QueueStats{Scheduled: 2, Ready: 3, Active: 1, Dead: 1}
		if s := stats(t, c, "q"); s != want {
			t.Errorf("Stats = %+v, want %+v", s, want)
		}
		if s := stats(t, c, "empty"); s != (admin.QueueStats{}) {
			t.Errorf("Stats of an unknown queue = %+v, want all zero", s)
		}
		if _, err := c.Stats(ctx, "bad name"); !errors.Is(err, worker.ErrInvalid) {
			t.Errorf("Stats of an invalid queue name: err = %v, want ErrInvalid", err)
		}

		now := time.Now()
		active := getJob(t, c, "q", "active")
		if active.State != worker.StateActive || active.Attempt != 1 {
			t.Errorf("active job: state %s attempt %d, want active 1", active.State, active.Attempt)
		}
		within(t, "LeaseUntil", active.LeaseUntil, now, now.Add(time.Minute))
		dead := getJob(t, c, "q", "dead")
		if dead.State != worker.StateDead || dead.Attempt != 1 || dead.LastError != "killed by the test" {
			t.Errorf("dead job: state %s attempt %d last error %q", dead.State, dead.Attempt, dead.LastError)
		}
		within(t, "DiedAt", dead.DiedAt, now.Add(-10*time.Second), now)
	})
}

func TestClientQueues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		if qs, err := c.AllQueues(t.Context()); err != nil || len(qs) != 0 {
			t.Fatalf("Queues before any enqueue = %v, %v; want none", qs, err)
		}
		enqueue(t, c, worker.JobSpec{Queue: "alpha"})
		enqueue(t, c, worker.JobSpec{Queue: "beta"})
		enqueue(t, c, worker.JobSpec{Queue: "beta"})
		if _, err := c.EnqueueMany(t.Context(), []worker.JobSpec{{Queue: "gamma"}, {Queue: "alpha"}}); err != nil {
			t.Fatalf("EnqueueMany: %v", err)
		}
		want := []string{"alpha", "beta", "gamma"}
		// A second client, with nothing cached, reads the same set.
		for _, cl := range []*client{c, newClient(t, rdb, cfg)} {
			qs, err := cl.AllQueues(t.Context())
			slices.Sort(qs)
			if err != nil || !slices.Equal(qs, want) {
				t.Errorf("Queues = %v, %v; want %v", qs, err, want)
			}
		}
		// QueuesKey names the set that Queues reads.
		members, err := rdb.Do(t.Context(), rdb.B().Smembers().Key(rediskeys.QueuesKey(prefix)).Build()).AsStrSlice()
		slices.Sort(members)
		if err != nil || !slices.Equal(members, want) {
			t.Errorf("SMEMBERS QueuesKey = %v, %v; want %v", members, err, want)
		}
	})
}

// TestClientEnqueueManyRedisError: when Redis fails, the results still carry
// every job's id, so the caller can retry the same specs with those ids and
// get no duplicates.
func TestClientEnqueueManyRedisError(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	broken, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{testkit.SingleAddr(t)}})
	if err != nil {
		t.Fatal(err)
	}
	broken.Close() // every command now fails
	specs := []worker.JobSpec{{Queue: "q"}, {Queue: "q", ID: "mine"}}
	res, err := newClient(t, broken, testConfig(t, prefix)).EnqueueMany(t.Context(), specs)
	if err == nil {
		t.Fatal("EnqueueMany on a closed client succeeded")
	}
	if len(res) != 2 || len(res[0].ID) != 26 || res[1].ID != "mine" {
		t.Fatalf("results %+v, want both ids", res)
	}
	// The retry with those ids writes each job once.
	c := newClient(t, testkit.Single(t), testConfig(t, prefix))
	for i := range specs {
		specs[i].ID = res[i].ID
	}
	for range 2 {
		if _, err := c.EnqueueMany(t.Context(), specs); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := c.Stats(t.Context(), "q"); err != nil || st.Ready != 2 {
		t.Errorf("Stats = %+v, %v; want 2 ready", st, err)
	}
}

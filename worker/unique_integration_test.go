package worker_test

import (
	"context"
	"errors"
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

// refused fails unless enqueueing spec is refused as a duplicate naming
// holder, the id returned: for its unique key (ErrUniqueKeyHeld, an
// ErrDuplicate) when it has one, else for its id.
func refused(t *testing.T, c *client, spec worker.JobSpec, holder string) {
	t.Helper()
	id, err := c.Enqueue(t.Context(), spec)
	if !errors.Is(err, worker.ErrDuplicate) || errors.Is(err, worker.ErrUniqueKeyHeld) != (spec.UniqueKey != "") {
		t.Fatalf("Enqueue(%+v) = %q, %v; want ErrDuplicate, ErrUniqueKeyHeld when for the unique key", spec, id, err)
	}
	if id != holder {
		t.Errorf("Enqueue(%+v) returned id %q with ErrDuplicate; want the holder's %q", spec, id, holder)
	}
}

// acceptedAgain enqueues spec until it is accepted, each refusal naming
// holder, and returns the new job's id and when it was accepted.
func acceptedAgain(t *testing.T, c *client, spec worker.JobSpec, holder string, within time.Duration) (string, time.Time) {
	t.Helper()
	var id string
	testkit.Poll{Every: 10 * time.Millisecond}.Eventually(t, within, "the enqueue to be accepted again", func() bool {
		got, err := c.Enqueue(t.Context(), spec)
		switch {
		case errors.Is(err, worker.ErrDuplicate):
			if got != holder {
				t.Errorf("refused with id %q; want the holder's %q", got, holder)
			}
			return false
		case err != nil:
			t.Fatalf("Enqueue(%+v): %v", spec, err)
		}
		id = got
		return true
	})
	return id, time.Now()
}

// TestUniqueKeyHeldUntilTheJobFinishes: a second job with the key of a job
// that has not finished is refused, with the first job's id, even when it
// brings its own id; other keys and other queues are unaffected. Once the
// first job ran and was acked the key is free at once. Get shows the key.
func TestUniqueKeyHeldUntilTheJobFinishes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const queue = "q"
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		spec := worker.JobSpec{Queue: queue, UniqueKey: "user:42", Payload: []byte("first")}
		first := enqueue(t, c, spec)

		id, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: queue, UniqueKey: "user:42", Payload: []byte("second")})
		if !errors.Is(err, worker.ErrDuplicate) || id != first {
			t.Fatalf("second Enqueue = %q, %v; want %q and ErrDuplicate", id, err, first)
		}
		if !strings.Contains(err.Error(), "user:42") || !strings.Contains(err.Error(), first) {
			t.Errorf("err = %q; want it to name the key and the holder", err)
		}
		// A job of its own id is refused for the key too; the id returned is
		// the holder's, and the refused id is not stored.
		refused(t, c, worker.JobSpec{Queue: queue, ID: "mine", UniqueKey: "user:42", Priority: worker.PriorityHigh}, first)
		if !isGone(t, c, queue, "mine") {
			t.Error("the refused job was stored")
		}
		other := enqueue(t, c, worker.JobSpec{Queue: queue, UniqueKey: "user:43"})
		enqueue(t, c, worker.JobSpec{Queue: "elsewhere", UniqueKey: "user:42"})
		plain := enqueue(t, c, worker.JobSpec{Queue: queue})
		if s := stats(t, c, queue); s.Ready != 3 {
			t.Errorf("Stats = %+v; want 3 ready", s)
		}
		job := getJob(t, c, queue, first)
		if job.UniqueKey != "user:42" || job.UniqueFor != 0 || job.UniqueAfterFinish || string(job.Payload) != "first" {
			t.Errorf("Get(first) = key %q for %s after finish %v payload %q; want user:42, 0, false, first",
				job.UniqueKey, job.UniqueFor, job.UniqueAfterFinish, job.Payload)
		}
		if job := getJob(t, c, queue, plain); job.UniqueKey != "" || job.UniqueFor != 0 {
			t.Errorf("Get(plain) = key %q for %s; want none", job.UniqueKey, job.UniqueFor)
		}

		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, queue, rec.Handler(succeed), worker.QueueOptions{}), cfg)
		for _, id := range []string{first, other, plain} {
			rec.WaitCalls(t, id, 1, 10*time.Second)
		}
		testkit.Eventually(t, 10*time.Second, "the first job to be acked", func() bool { return isGone(t, c, queue, first) })
		again := enqueue(t, c, worker.JobSpec{Queue: queue, UniqueKey: "user:42", Payload: []byte("again")})
		if again == first {
			t.Errorf("the new job has the first one's id %q", again)
		}
		if calls := rec.WaitCalls(t, again, 1, 10*time.Second); calls[0].Payload != "again" {
			t.Errorf("the new job ran with payload %q; want again", calls[0].Payload)
		}
	})
}

// TestUniqueGetShowsTheWindow: Get reports the key, the window, whether it
// counts from the finish, and the priority, as enqueued.
func TestUniqueGetShowsTheWindow(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		tests := []worker.JobSpec{
			{Queue: "q", UniqueKey: "a", UniqueFor: 90 * time.Minute},
			{Queue: "q", UniqueKey: "b", UniqueFor: time.Second, UniqueAfterFinish: true, Priority: worker.PriorityHigh, Delay: time.Hour},
			{Queue: "q", ID: "own", UniqueKey: "c", UniqueFor: 1500 * time.Microsecond, Priority: worker.PriorityLow},
		}
		for _, spec := range tests {
			id := enqueue(t, c, spec)
			job := getJob(t, c, "q", id)
			if job.UniqueKey != spec.UniqueKey || job.UniqueFor != spec.UniqueFor.Truncate(time.Millisecond) ||
				job.UniqueAfterFinish != spec.UniqueAfterFinish || job.Priority != spec.Priority {
				t.Errorf("Get(%s) = {key %q for %s after finish %v priority %v}; want {%q %s %v %v}", id,
					job.UniqueKey, job.UniqueFor, job.UniqueAfterFinish, job.Priority,
					spec.UniqueKey, spec.UniqueFor.Truncate(time.Millisecond), spec.UniqueAfterFinish, spec.Priority)
			}
		}
	})
}

// TestUniqueForFromEnqueue: with UniqueFor, the key stays held after the
// job was acked, until the window counted from the enqueue ends.
func TestUniqueForFromEnqueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const queue, window = "q", 2 * time.Second
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, queue, rec.Handler(succeed), worker.QueueOptions{}), cfg)

		spec := worker.JobSpec{Queue: queue, UniqueKey: "report:2026-11", UniqueFor: window}
		before := time.Now()
		first := enqueue(t, c, spec)
		after := time.Now()
		rec.WaitCalls(t, first, 1, 10*time.Second)
		testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, queue, first) })
		if time.Since(before) > window-500*time.Millisecond {
			t.Fatalf("the job took %v to run and be acked; too close to the window of %v to test it", time.Since(before), window)
		}
		refused(t, c, spec, first)

		second, accepted := acceptedAgain(t, c, spec, first, window+5*time.Second)
		if accepted.Before(before.Add(window - clockSlack)) {
			t.Errorf("accepted again %v after the first enqueue; want the window of %v", accepted.Sub(before), window)
		}
		if late := accepted.Sub(after.Add(window)); late > time.Second {
			t.Errorf("accepted again %v after the window ended; want at once", late)
		}
		// The new job holds the key in its turn.
		refused(t, c, spec, second)
	})
}

// TestUniqueForAfterFinish: with UniqueAfterFinish the window counts from
// the job's finish: a job that runs longer than the window holds its key
// all along, and for the window after its ack.
func TestUniqueForAfterFinish(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const queue, window = "q", time.Second
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		started, release := make(chan string, 1), make(chan struct{})
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			if string(job.Payload) != "hold" {
				return nil
			}
			started <- job.ID
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		startDaemon(t, rdb, register(t, nil, queue, h, worker.QueueOptions{}), cfg)

		spec := worker.JobSpec{Queue: queue, UniqueKey: "sync:acme", UniqueFor: window, UniqueAfterFinish: true}
		hold := spec
		hold.Payload = []byte("hold")
		enqueued := time.Now()
		first := enqueue(t, c, hold)
		receive(t, started, 10*time.Second, "the job to start")
		// Nothing to wait on: the point is that a window counted from the
		// enqueue would have ended by now.
		<-time.After(time.Until(enqueued.Add(window + 200*time.Millisecond)))
		refused(t, c, spec, first)

		released := time.Now()
		close(release)
		testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, queue, first) })
		if time.Since(released) > window-300*time.Millisecond {
			t.Fatalf("the ack took %v; too close to the window of %v to test it", time.Since(released), window)
		}
		refused(t, c, spec, first)
		_, accepted := acceptedAgain(t, c, spec, first, window+5*time.Second)
		if accepted.Before(released.Add(window - clockSlack)) {
			t.Errorf("accepted again %v after the job finished; want the window of %v", accepted.Sub(released), window)
		}
	})
}

// TestUniqueKeyFreedWhenTheJobEnds: cancelling a waiting or a running job
// frees its key, as does the job's death; a window counted from the
// enqueue outlives the cancel.
func TestUniqueKeyFreedWhenTheJobEnds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		ctx := t.Context()

		// Waiting jobs of a queue nobody serves.
		waiting := worker.JobSpec{Queue: "idle", UniqueKey: "w", Delay: time.Hour}
		first := enqueue(t, c, waiting)
		refused(t, c, waiting, first)
		if err := c.Cancel(ctx, "idle", first); err != nil {
			t.Fatalf("Cancel(waiting) = %v", err)
		}
		if again := enqueue(t, c, waiting); again == first {
			t.Errorf("re-enqueued job has the cancelled one's id %q", again)
		}
		windowed := worker.JobSpec{Queue: "idle", UniqueKey: "kept", UniqueFor: time.Hour}
		holder := enqueue(t, c, windowed)
		if err := c.Cancel(ctx, "idle", holder); err != nil {
			t.Fatalf("Cancel(windowed) = %v", err)
		}
		refused(t, c, windowed, holder)

		// Running and failing jobs of a served queue.
		started := make(chan string, 1)
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			switch string(job.Payload) {
			case "block":
				started <- job.ID
				<-ctx.Done()
				return nil
			case "die":
				return worker.Permanent(errors.New("nope"))
			}
			return nil
		})
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)
		running := enqueue(t, c, worker.JobSpec{Queue: "q", UniqueKey: "r", Payload: []byte("block")})
		receive(t, started, 10*time.Second, "the blocking job to start")
		refused(t, c, worker.JobSpec{Queue: "q", UniqueKey: "r"}, running)
		if err := c.Cancel(ctx, "q", running); err != nil {
			t.Fatalf("Cancel(running) = %v", err)
		}
		next := enqueue(t, c, worker.JobSpec{Queue: "q", UniqueKey: "r"})
		testkit.Eventually(t, 10*time.Second, "the next job to run and be acked", func() bool { return isGone(t, c, "q", next) })
		if job := getJob(t, c, "q", running); job.State != worker.StateCancelled || job.LastError != "cancelled" || job.UniqueKey != "r" {
			t.Errorf("cancelled job: state %s last error %q key %q; want cancelled, cancelled, r", job.State, job.LastError, job.UniqueKey)
		}

		dies := enqueue(t, c, worker.JobSpec{Queue: "q", UniqueKey: "d", Payload: []byte("die")})
		testkit.Eventually(t, 10*time.Second, "the failing job to die", func() bool { return inState(t, c, "q", dies, worker.StateDead) })
		enqueue(t, c, worker.JobSpec{Queue: "q", UniqueKey: "d"})
	})
}

// TestUniqueEnqueueManySameKey: within one EnqueueMany, the first spec of
// a key takes it and the later ones are refused with its id; nothing is
// written for them.
func TestUniqueEnqueueManySameKey(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		res, err := c.EnqueueMany(t.Context(), []worker.JobSpec{
			{Queue: "q", UniqueKey: "k", Payload: []byte("a")},
			{Queue: "q", ID: "mine", UniqueKey: "k", Payload: []byte("b")},
			{Queue: "q", UniqueKey: "other"},
			{Queue: "q", UniqueKey: "k", Priority: worker.PriorityHigh},
			{Queue: "elsewhere", UniqueKey: "k"},
		})
		if err != nil {
			t.Fatalf("EnqueueMany: %v", err)
		}
		for i, wantDup := range []bool{false, true, false, true, false} {
			if got := errors.Is(res[i].Err, worker.ErrDuplicate); got != wantDup || (!wantDup && res[i].Err != nil) {
				t.Errorf("result %d: err %v; want duplicate %v", i, res[i].Err, wantDup)
			}
			if wantDup && res[i].ID != res[0].ID {
				t.Errorf("result %d: id %q; want the holder's %q", i, res[i].ID, res[0].ID)
			}
		}
		if s := stats(t, c, "q"); s.Ready != 2 {
			t.Errorf("Stats = %+v; want 2 ready", s)
		}
		if !isGone(t, c, "q", "mine") {
			t.Error("the refused job's own id was stored")
		}
		if job := getJob(t, c, "q", res[0].ID); string(job.Payload) != "a" || job.Priority != worker.PriorityNormal {
			t.Errorf("the key's holder: payload %q priority %v; want a, normal", job.Payload, job.Priority)
		}
	})
}

// TestEnqueueManyRefusesBadPriorityAndUnique: a spec with a bad priority or
// unique field among good ones is named, and nothing is written: no job,
// no queue recorded, no key taken.
func TestEnqueueManyRefusesBadPriorityAndUnique(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		tests := []struct {
			name  string
			spec  worker.JobSpec
			field string
		}{
			{"priority 5", worker.JobSpec{Queue: "q", Priority: 5}, "Priority"},
			{"unique key with a space", worker.JobSpec{Queue: "q", UniqueKey: "a b"}, "UniqueKey"},
			{"unique key over 256 bytes", worker.JobSpec{Queue: "q", UniqueKey: strings.Repeat("k", worker.MaxIDLen+1)}, "UniqueKey"},
			{"window without a key", worker.JobSpec{Queue: "q", UniqueFor: time.Second}, "UniqueFor"},
			{"negative window", worker.JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: -time.Second}, "UniqueFor"},
			{"window over a year", worker.JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: worker.MaxUniqueFor + time.Hour}, "UniqueFor"},
			{"window under 1ms", worker.JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: time.Microsecond}, "UniqueFor"},
			{"after finish without a window", worker.JobSpec{Queue: "q", UniqueKey: "k", UniqueAfterFinish: true}, "UniqueAfterFinish"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := c.Enqueue(t.Context(), tt.spec)
				checkInvalid(t, err, tt.field, "")
				good := worker.JobSpec{Queue: "q", UniqueKey: "taken?", Priority: worker.PriorityHigh}
				other := worker.JobSpec{Queue: "other", ID: "x", UniqueKey: "taken?"}
				_, err = c.EnqueueMany(t.Context(), []worker.JobSpec{good, other, tt.spec, good})
				checkInvalid(t, err, tt.field, "specs[2]")
			})
		}
		for _, q := range []string{"q", "other"} {
			if s := stats(t, c, q); s != (admin.QueueStats{}) {
				t.Errorf("Stats(%s) = %+v after refused enqueues; want all zero", q, s)
			}
		}
		if qs, err := c.AllQueues(t.Context()); err != nil || len(qs) != 0 {
			t.Errorf("Queues = %v, %v; want none recorded", qs, err)
		}
		// No key was taken by the refused batches.
		enqueue(t, c, worker.JobSpec{Queue: "q", UniqueKey: "taken?"})
		enqueue(t, c, worker.JobSpec{Queue: "other", ID: "x", UniqueKey: "taken?"})
	})
}

// TestIDRetention: a queue served with IDRetention refuses a caller's job
// id for that long after its job finished, not only while it exists; a
// generated id, and any id of a queue without retention, can be given
// again at once.
func TestIDRetention(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const retention = 2 * time.Second
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		reg := register(t, nil, "retained", rec.Handler(succeed), worker.QueueOptions{IDRetention: retention})
		register(t, reg, "plain", rec.Handler(succeed), worker.QueueOptions{})
		d := startDaemon(t, rdb, reg, cfg)
		// The retention takes effect once the daemon stored it, in the
		// queue's settings (the last of QueueKeys), with its first report.
		settings := rediskeys.QueueKeys(prefix, "retained").Settings
		testkit.Eventually(t, 10*time.Second, "the daemon to report and store the queue's id retention", func() bool {
			f, err := c.Fleet(t.Context(), "retained")
			v, ok := testkit.HGet(t, rdb, settings, "id_retention")
			return err == nil && len(f.Processes) == 1 && f.Processes[0].ID == d.ID() && ok && v == "2000"
		})

		spec := worker.JobSpec{Queue: "retained", ID: "order-1", Payload: []byte("first")}
		enqueue(t, c, spec)
		ran := rec.WaitCalls(t, "order-1", 1, 10*time.Second)
		testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "retained", "order-1") })
		if time.Since(ran[0].Start) > retention-500*time.Millisecond {
			t.Fatalf("the ack came %v after the start; too close to the retention of %v to test it", time.Since(ran[0].Start), retention)
		}
		again := spec
		again.Payload = []byte("again")
		refused(t, c, again, "order-1")
		if _, err := c.Get(t.Context(), "retained", "order-1"); !errors.Is(err, worker.ErrNotFound) {
			t.Errorf("Get of a retained id = %v; want ErrNotFound (only the id is kept)", err)
		}
		_, accepted := acceptedAgain(t, c, again, "order-1", retention+5*time.Second)
		if accepted.Before(ran[0].Start.Add(retention - clockSlack)) {
			t.Errorf("the id was accepted again %v after its job started; want the retention of %v after its finish", accepted.Sub(ran[0].Start), retention)
		}
		if calls := rec.WaitCalls(t, "order-1", 2, 10*time.Second); calls[1].Payload != "again" {
			t.Errorf("second run of order-1 had payload %q; want again", calls[1].Payload)
		}

		// A generated id is not retained: given back as the caller's own,
		// right after its job was acked, it is a new job.
		gen := enqueue(t, c, worker.JobSpec{Queue: "retained", Payload: []byte("generated")})
		rec.WaitCalls(t, gen, 1, 10*time.Second)
		testkit.Eventually(t, 10*time.Second, "the generated-id job to be acked", func() bool { return isGone(t, c, "retained", gen) })
		enqueue(t, c, worker.JobSpec{Queue: "retained", ID: gen})
		rec.WaitCalls(t, gen, 2, 10*time.Second)

		// Without retention an id is free once its job is gone.
		enqueue(t, c, worker.JobSpec{Queue: "plain", ID: "order-1"})
		rec.WaitCalls(t, "order-1", 3, 10*time.Second)
		testkit.Eventually(t, 10*time.Second, "the plain job to be acked", func() bool { return isGone(t, c, "plain", "order-1") })
		enqueue(t, c, worker.JobSpec{Queue: "plain", ID: "order-1"})
		if _, ok := testkit.HGet(t, rdb, rediskeys.QueueKeys(prefix, "plain").Settings, "id_retention"); ok {
			t.Error("a queue served without IDRetention has one stored")
		}
	})
}

// TestCancelRunningJobLatency: Client.Cancel ends a running handler's
// context with ErrCancelled through the queue's wake channel. The lease is
// long here, so the next lease extension (Lease/3 = 10s) cannot be what
// ends it. The latency is logged; the target (at most 100ms) is measured
// by courier bench.
func TestCancelRunningJobLatency(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const runs = 5
		cfg := testConfig(t, prefix)
		cfg.Lease = 30 * time.Second
		c := newClient(t, rdb, cfg)
		started := make(chan string, 1)
		type end struct {
			at    time.Time
			cause error
		}
		ended := make(chan end, 1)
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			started <- job.ID
			<-ctx.Done()
			ended <- end{time.Now(), context.Cause(ctx)}
			return nil
		})
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{Concurrency: 1}), cfg)
		// A first job, not measured: the daemon claims it as soon as it
		// starts, possibly before its wake-up subscription is confirmed, and
		// a cancel message sent before that is not received (the next lease
		// extension, Lease/3 later, finds the job cancelled instead).
		warm := enqueue(t, c, worker.JobSpec{Queue: "q"})
		receive(t, started, 10*time.Second, "the first job to start")
		if err := c.Cancel(t.Context(), "q", warm); err != nil {
			t.Fatalf("Cancel = %v", err)
		}
		receive(t, ended, cfg.Lease, "the first job's context to end")
		var latencies []time.Duration
		for range runs {
			id := enqueue(t, c, worker.JobSpec{Queue: "q"})
			receive(t, started, 10*time.Second, "the job to start")
			sent := time.Now()
			if err := c.Cancel(t.Context(), "q", id); err != nil {
				t.Fatalf("Cancel = %v", err)
			}
			e := receive(t, ended, 10*time.Second, "the handler's context to end")
			if !errors.Is(e.cause, worker.ErrCancelled) {
				t.Errorf("handler's context cause %v; want ErrCancelled", e.cause)
			}
			latencies = append(latencies, e.at.Sub(sent))
			testkit.Eventually(t, 10*time.Second, "the job to be cancelled", func() bool { return inState(t, c, "q", id, worker.StateCancelled) })
		}
		slices.Sort(latencies)
		t.Logf("Cancel to ctx.Done of the handler, %d runs: min %v, median %v, max %v", runs, latencies[0], latencies[runs/2], latencies[runs-1])
		if latencies[runs-1] >= 5*time.Second {
			t.Errorf("a cancelled handler's context ended %v after Cancel; want well under 5s", latencies[runs-1])
		}
	})
}

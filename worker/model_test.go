package worker_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestCompositionModel composes the features that must hold together:
// random sequences of enqueues (caller ids that collide, unique keys with
// and without windows, priorities, delays, jobs that fail once), pauses
// and resumes, changes of the number of partitions and of the id retention
// rolled out by restarting the daemons one at a time, cancels, graceful
// stops and kill -9s of daemons, on a rate-limited queue and a plain one.
// After every step it checks what the model knows for certain: no job is
// claimed while its queue is paused or after it was cancelled (and every
// cancelled job ends in the state cancelled, listed there), no enqueue
// is refused or accepted against the promises (ids, retained ids, unique
// keys and their windows, never refused for a layout change); at the end,
// no accepted job is lost, none ran twice but where a daemon was killed,
// no window of the rate limit took more than the limit, every job ran with
// its kind and a job of a kind no daemon serves died unrun.
//
// COURIER_MODEL_SEEDS (default 2) seeds of COURIER_MODEL_STEPS (default
// 60) steps run on single Redis and on a Cluster; COURIER_MODEL_SEED
// replays one seed. make chaos runs 50 seeds of 200 steps on each.
func TestCompositionModel(t *testing.T) {
	t.Parallel()
	seeds, steps := modelSize(t)
	for _, b := range []struct {
		name    string
		connect func(testing.TB) rueidis.Client
	}{{"single", testkit.Single}, {"cluster", testkit.Cluster}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, seed := range seeds {
				t.Run("seed-"+strconv.FormatUint(seed, 10), func(t *testing.T) {
					w := newWorld(t, b.connect, seed)
					w.run(steps)
					t.Logf("seed %d: %d steps, %d jobs accepted, %d daemons started, %d killed",
						seed, steps, w.accepted(), w.lastID, len(w.killed))
				})
			}
		})
	}
}

// modelSize reads the seeds and steps from the environment.
func modelSize(t *testing.T) ([]uint64, int) {
	num := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", name, v)
		}
		return n
	}
	steps := num("COURIER_MODEL_STEPS", 60)
	if v := os.Getenv("COURIER_MODEL_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("COURIER_MODEL_SEED=%q: %v", v, err)
		}
		return []uint64{s}, steps
	}
	seeds := make([]uint64, num("COURIER_MODEL_SEEDS", 2))
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return seeds, steps
}

// run starts two daemons, takes steps random steps, checking after each,
// then ends the way a user would (every daemon on the last configuration,
// every queue resumed) and checks the whole.
func (w *world) run(steps int) {
	w.start()
	w.start()
	for range steps {
		w.step()
		w.checkRuns()
		w.fail()
	}
	w.finish()
	w.fail()
}

func (w *world) step() {
	switch r := w.rng.IntN(100); {
	case r < 35:
		w.enqueue()
	case r < 40:
		w.burst()
	case r < 47:
		w.cancel()
	case r < 54:
		w.pauseOrResume()
	case r < 62:
		w.changeTarget()
	case r < 76:
		w.restartOne()
	case r < 79:
		md := w.daemons[w.rng.IntN(len(w.daemons))]
		w.kill(md)
		w.start()
	case r < 82:
		// A new producer process: it reads the layout afresh.
		w.c = newClient(w.t, w.rdb, w.cfg)
		w.note("new producer")
	default:
		d := time.Duration(10+w.rng.IntN(300)) * time.Millisecond
		w.note("wait %s", d)
		time.Sleep(d) //nolint:forbidigo // the model lets the fleet work for a while of the real clock
	}
}

// enqueue sends one to four jobs in one call and checks each outcome.
func (w *world) enqueue() {
	q := w.queues[w.rng.IntN(len(w.queues))]
	specs := make([]worker.JobSpec, 1+w.rng.IntN(4))
	for i := range specs {
		s := worker.JobSpec{Queue: q.name, Priority: []worker.Priority{worker.PriorityLow, worker.PriorityNormal, worker.PriorityHigh}[w.rng.IntN(3)]}
		switch r := w.rng.IntN(10); {
		case r < 3: // a caller's id, from a small pool: they collide
			s.ID = "c" + strconv.Itoa(w.rng.IntN(12))
		case r < 5: // a unique key, from a small pool, on a generated id
			s.UniqueKey = "k" + strconv.Itoa(w.rng.IntN(6))
			switch w.rng.IntN(6) {
			case 0, 1:
				s.UniqueFor = 300 * time.Millisecond
			case 2:
				s.UniqueFor, s.UniqueAfterFinish = 300*time.Millisecond, true
			}
		}
		switch w.rng.IntN(10) {
		case 0, 1:
			s.Delay = 50 * time.Millisecond
		case 2:
			s.Delay = 300 * time.Millisecond
		}
		if q.keyCap > 0 && w.rng.IntN(2) == 0 {
			// A job key; one that comes with a unique key is a function
			// of it, as a tenant's unique keys are its own (docs/keys.md).
			s.Key = modelKeys[w.rng.IntN(len(modelKeys))]
			if s.UniqueKey != "" {
				s.Key = modelKeys[int(s.UniqueKey[len(s.UniqueKey)-1])%len(modelKeys)]
			}
		}
		switch w.rng.IntN(10) {
		case 0:
			s.Payload = []byte("fail-once")
		case 1:
			if s.Key != "" {
				s.Payload = []byte("limit-once") // its handler says worker.KeyLimited once
			}
		}
		if q.kinds {
			s.Kind = modelKinds[w.rng.IntN(len(modelKinds))]
			if s.ID == "" && s.UniqueKey == "" && w.rng.IntN(8) == 0 {
				// Only on a generated id: a dead job keeps its id.
				s.Kind = modelUnserved
			}
		}
		specs[i] = s
	}
	homes := make([]string, len(specs))
	for i, s := range specs {
		homes[i] = "?"
		switch {
		case s.Key != "" && (s.ID != "" || s.UniqueKey != ""):
			homes[i] = w.homeOf(q, s.Key) // a keyed job lives in its key's partition
		case s.ID != "":
			homes[i] = w.homeOf(q, s.ID)
		case s.UniqueKey != "":
			homes[i] = w.homeOf(q, s.UniqueKey)
		}
	}
	c, settled := w.settled(q)
	retained := time.Duration(-1)
	if settled {
		retained = c.retention
	}
	before := time.Now()
	res, err := w.c.EnqueueMany(w.t.Context(), specs)
	if err != nil {
		w.violation("enqueue of %d jobs to %s: %v", len(specs), q.name, err)
		return
	}
	var notes []string
	for i, r := range res {
		s := specs[i]
		w.checkEnqueued(q, s, r, homes[i], retained, before)
		notes = append(notes, fmt.Sprintf("%s(unique=%s for=%s after=%t key=%s)=%v", r.ID, s.UniqueKey, s.UniqueFor, s.UniqueAfterFinish, s.Key, r.Err))
		if r.Err != nil {
			continue
		}
		j := &mjob{queue: q.name, id: r.ID, key: s.UniqueKey, window: s.UniqueFor, afterFinish: s.UniqueAfterFinish,
			callerID: s.ID != "", failOnce: string(s.Payload) == "fail-once", accepted: time.Now(), home: homes[i], retained: retained,
			kind: s.Kind, jobKey: s.Key}
		if homes[i] == "?" {
			j.home = ""
		}
		w.jobs[q.name+"/"+r.ID] = append(w.jobs[q.name+"/"+r.ID], j)
		if s.UniqueKey != "" {
			w.keys[q.name+"/"+s.UniqueKey] = append(w.keys[q.name+"/"+s.UniqueKey], j)
		}
	}
	w.note("enqueue %s: %s", q.name, strings.Join(notes, " "))
}

// burst enqueues 30 to 60 jobs of generated ids at once, enough to use a
// rate limit up.
func (w *world) burst() {
	q := w.queues[w.rng.IntN(len(w.queues))]
	specs := make([]worker.JobSpec, 30+w.rng.IntN(31))
	for i := range specs {
		specs[i] = worker.JobSpec{Queue: q.name}
	}
	res, err := w.c.EnqueueMany(w.t.Context(), specs)
	if err != nil {
		w.violation("burst of %d jobs to %s: %v", len(specs), q.name, err)
		return
	}
	for _, r := range res {
		if r.Err != nil {
			w.violation("%s/%s: a generated id refused: %v", q.name, r.ID, r.Err)
			continue
		}
		w.jobs[q.name+"/"+r.ID] = append(w.jobs[q.name+"/"+r.ID], &mjob{queue: q.name, id: r.ID, accepted: time.Now(), retained: -1})
	}
	w.note("burst %s: %d jobs", q.name, len(specs))
}

// cancel cancels a job of a generated id that the model has not
// cancelled yet.
func (w *world) cancel() {
	var pick []*mjob
	for _, js := range w.jobs {
		if j := js[0]; len(js) == 1 && !j.callerID && !j.cancelled {
			pick = append(pick, j)
		}
	}
	if len(pick) == 0 {
		return
	}
	j := pick[w.rng.IntN(len(pick))]
	err := w.op.Cancel(w.t.Context(), j.queue, j.id)
	w.note("cancel %s/%s: %v", j.queue, j.id, err)
	switch {
	case err == nil:
		j.cancelled, j.cancelledAt = true, w.redisNow()
	case errors.Is(err, worker.ErrNotFound):
		for _, r := range w.runsOf(j.queue + "/" + j.id) {
			if r.done && r.ok {
				return
			}
		}
		w.violation("cancel %s/%s: not found, yet it never finished", j.queue, j.id)
	case errors.Is(err, worker.ErrJobDead) && j.kind == modelUnserved:
		// It died unrun before the cancel, as a job of a kind no daemon
		// serves does (checkUnserved checks how).
	default:
		w.violation("cancel %s/%s: %v", j.queue, j.id, err)
	}
}

// pauseOrResume flips a queue's pause.
func (w *world) pauseOrResume() {
	q := w.queues[w.rng.IntN(len(w.queues))]
	if q.paused {
		w.resume(q)
		return
	}
	if err := w.op.Pause(w.t.Context(), q.name); err != nil {
		w.violation("pause %s: %v", q.name, err)
		return
	}
	q.paused, q.pausedAt = true, w.redisNow()
	if s, err := w.op.Stats(w.t.Context(), q.name); err != nil || !s.Paused {
		w.violation("stats of paused %s: %+v, %v; want paused", q.name, s, err)
	}
	w.note("pause %s", q.name)
}

// changeTarget changes the number of partitions or the id retention that
// daemons of a queue start with from now on.
func (w *world) changeTarget() {
	q := w.queues[w.rng.IntN(len(w.queues))]
	if w.rng.IntN(2) == 0 {
		n := q.partitions
		for n == q.partitions {
			n = 1 + w.rng.IntN(4)
		}
		if q.limit.N > 0 && n > q.limit.N {
			return
		}
		q.partitions, q.gen = n, q.gen+1
	} else {
		q.retention = time.Hour - q.retention // 0 ↔ 1h
	}
	w.note("target %s: partitions %d, retention %s", q.name, q.partitions, q.retention)
}

// restartOne stops a daemon gracefully and starts one in its place with
// the targets: a step of a rolling restart (daemons whose configuration
// is behind go first).
func (w *world) restartOne() {
	md := w.daemons[w.rng.IntN(len(w.daemons))]
	for _, o := range w.daemons {
		if w.behind(o) {
			md = o
			break
		}
	}
	w.stop(md)
	w.start()
	if len(w.daemons) < 3 && w.rng.IntN(3) == 0 {
		w.start()
	}
}

// behind reports whether md runs a configuration other than the targets.
func (w *world) behind(md *mdaemon) bool {
	for _, q := range w.queues {
		if md.conf[q.name] != (mconf{partitions: q.partitions, retention: q.retention}) {
			return true
		}
	}
	return false
}

// accepted counts the jobs the model saw accepted.
func (w *world) accepted() int {
	n := 0
	for _, js := range w.jobs {
		n += len(js)
	}
	return n
}

// finish rolls every daemon to the targets, resumes every queue and
// waits until every job ran, then checks the whole.
func (w *world) finish() {
	for _, md := range append([]*mdaemon(nil), w.daemons...) {
		w.stop(md)
		w.start()
	}
	for _, q := range w.queues {
		if q.paused {
			w.resume(q)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, q := range w.queues {
		for {
			s, err := w.c.Stats(w.t.Context(), q.name)
			if err == nil && s.Ready+s.Scheduled+s.Active == 0 {
				break
			}
			if time.Now().After(deadline) {
				w.violation("queue %s not drained after 60s: %+v, %v", q.name, s, err)
				return
			}
			time.Sleep(50 * time.Millisecond) //nolint:forbidigo // a poll of the real clock
		}
	}
	testkit.Eventually(w.t, 10*time.Second, "every handler to return", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, rs := range w.runs {
			for _, r := range rs {
				if !r.done {
					return false
				}
			}
		}
		return true
	})
	w.checkRuns()
	w.checkOnce()
	w.checkUnserved()
	w.checkRate()
	w.checkCancelled()
	w.checkKeys()
}

// resume resumes q (finish's).
func (w *world) resume(q *mqueue) {
	before := w.redisNow()
	if err := w.op.Resume(w.t.Context(), q.name); err != nil {
		w.violation("resume %s: %v", q.name, err)
	}
	q.pauses = append(q.pauses, [2]int64{q.pausedAt, before})
	q.paused = false
	w.note("resume %s", q.name)
}

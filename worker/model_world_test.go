package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// The composition model test (model_test.go) drives a small fleet of
// in-process daemons and a producer with random steps, and checks each
// step against a model of what every job may do. This file is its world:
// the daemons, the queues, the jobs and the runs the handlers record.

// mqueue is a queue of the model: its target configuration (what daemons
// started from now on run with) and what the model knows of its pauses.
type mqueue struct {
	name       string
	limit      worker.RateLimit // the same for every daemon
	partitions int              // target
	retention  time.Duration    // target
	gen        int              // counts changes of the target partitions
	paused     bool
	pausedAt   int64      // Redis µs read after the last Pause returned
	pauses     [][2]int64 // ended pauses: [after Pause returned, before Resume was sent)
	// kinds: the queue is served with worker.Kinds (modelKinds), and its
	// jobs get a kind, one of them or one no daemon serves.
	kinds bool
	// keyCap: half the queue's jobs get a job key (modelKeys), and no key
	// runs more than keyCap jobs at once (QueueOptions.KeyConcurrency).
	keyCap int
}

// modelKeys are the job keys of a queue with a key cap.
var modelKeys = []string{"t0", "t1", "t2"}

// keyOver is a start that took a key above its cap: when, which key, how
// many ran, and whether the key had jobs (waiting or running) in more than
// one partition, as after a change of the number of partitions moved its
// home while jobs of it stayed in the old one (docs/keys.md: it may then
// run up to its cap in each).
type keyOver struct {
	at      time.Time
	key     string
	running int
	spread  bool
}

// modelKinds are the kinds a queue with kinds serves ("" for jobs without
// one); modelUnserved is a kind none serves: its jobs die unrun.
var modelKinds = []string{"", "mail"}

const modelUnserved = "nobody.serves"

// mconf is what one daemon runs a queue with.
type mconf struct {
	partitions int
	retention  time.Duration
}

// mdaemon is one daemon of the fleet, on a Redis connection of its own.
type mdaemon struct {
	id      int
	rdb     rueidis.Client
	d       *worker.Daemon
	cancel  context.CancelFunc
	done    chan error
	conf    map[string]mconf
	started time.Time
	killed  bool
	killAt  time.Time
	stopped bool
}

// mjob is one job the model saw accepted.
type mjob struct {
	queue, id   string
	key         string        // unique key ("" none)
	window      time.Duration // UniqueFor
	afterFinish bool
	callerID    bool
	failOnce    bool
	accepted    time.Time
	home        string        // its partition (its jobs key), when the layout was settled at its enqueue; "" unknown
	retained    time.Duration // the queue's settled id retention at its enqueue; -1 unknown
	cancelled   bool
	cancelledAt int64  // Redis µs read after Cancel returned nil
	kind        string // JobSpec.Kind
	jobKey      string // JobSpec.Key
}

// mrun is one attempt a handler ran.
type mrun struct {
	daemon  int
	claimed int64 // job.StartedAt, Redis µs
	attempt int
	kind    string // job.Kind, as the handler saw it
	payload string
	done    bool
	ok      bool // returned nil with its context alive
	ended   time.Time
}

// world is one seed's run.
type world struct {
	t       *testing.T
	rng     *rand.Rand
	connect func(testing.TB) rueidis.Client
	rdb     rueidis.Client
	c       *client // the producer: a new one now and then, as processes start
	op      *client // the operator: one for the whole run, whatever it read
	cfg     worker.Config
	queues  []*mqueue
	daemons []*mdaemon
	killed  []*mdaemon // every daemon killed so far
	lastID  int
	last    time.Time          // the last daemon start or stop
	jobs    map[string][]*mjob // "queue/id" → the accepted jobs of that id, in order
	keys    map[string][]*mjob // "queue/key" → the accepted jobs of that unique key
	mu      sync.Mutex
	runs    map[string][]*mrun // "queue/id" → attempts, appended by the handlers
	keyRun  map[string]int     // "queue/key" → its jobs running now (under mu)
	keyOver []keyOver          // starts above a key's cap (under mu)
	checked map[string]int     // runs already checked, by "queue/id"
	trail   []string           // the steps, printed with a violation
	bad     []string
	logs    *testkit.Buffer // the daemons' warnings, printed with a violation
}

func newWorld(t *testing.T, connect func(testing.TB) rueidis.Client, seed uint64) *world {
	prefix := testkit.Prefix(t)
	logs := &testkit.Buffer{}
	cfg := worker.Config{
		Prefix:          prefix,
		Lease:           2 * time.Second,
		LeaderLease:     time.Second,
		PollInterval:    time.Second,
		ShutdownTimeout: 5 * time.Second,
		RecoverInterval: 100 * time.Millisecond,
		Logger:          slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	rdb := connect(t)
	w := &world{
		t: t, logs: logs, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), connect: connect, rdb: rdb, cfg: cfg,
		c: newClient(t, rdb, cfg), op: newClient(t, rdb, cfg),
		jobs: map[string][]*mjob{}, keys: map[string][]*mjob{}, runs: map[string][]*mrun{}, checked: map[string]int{},
		keyRun: map[string]int{},
		queues: []*mqueue{
			{name: "limited", limit: worker.RateLimit{N: 20, Per: 200 * time.Millisecond}, partitions: 2, retention: time.Hour, keyCap: 2},
			{name: "plain", partitions: 1, kinds: true},
		},
	}
	t.Cleanup(w.stopAll)
	return w
}

// note adds a line to the trail.
func (w *world) note(format string, args ...any) {
	w.trail = append(w.trail, fmt.Sprintf("%4d %s ", len(w.trail), time.Now().Format("15:04:05.000000"))+fmt.Sprintf(format, args...))
}

// violation records a broken promise.
func (w *world) violation(format string, args ...any) {
	w.bad = append(w.bad, fmt.Sprintf(format, args...))
}

// redisNow is the Redis clock in µs.
func (w *world) redisNow() int64 {
	v, err := w.rdb.Do(w.t.Context(), w.rdb.B().Time().Build()).AsStrSlice()
	if err != nil || len(v) != 2 {
		w.t.Fatalf("TIME: %v %v", v, err)
	}
	var s, us int64
	_, _ = fmt.Sscan(v[0], &s)
	_, _ = fmt.Sscan(v[1], &us)
	return s*1_000_000 + us
}

// handler records each attempt a daemon runs; a job whose payload says
// so fails its first attempt.
func (w *world) handler(daemon int) worker.HandlerFunc {
	return func(ctx context.Context, job *worker.Job) error {
		k := job.Queue + "/" + job.ID
		r := &mrun{daemon: daemon, claimed: job.StartedAt.UnixMicro(), attempt: job.Attempt, kind: job.Kind, payload: string(job.Payload)}
		kk := job.Queue + "/" + job.Key
		w.mu.Lock()
		w.runs[k] = append(w.runs[k], r)
		over := 0
		if job.Key != "" {
			w.keyRun[kk]++
			if c := w.queue(job.Queue).keyCap; w.keyRun[kk] > c {
				over = w.keyRun[kk]
			}
		}
		w.mu.Unlock()
		if over > 0 {
			o := keyOver{at: time.Now(), key: kk, running: over, spread: w.spread(job.Queue, job.Key)}
			w.mu.Lock()
			w.keyOver = append(w.keyOver, o)
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(len(job.ID)%4) * 3 * time.Millisecond):
		}
		fail := job.Attempt == 1 && string(job.Payload) == "fail-once"
		limited := !r.retried() && string(job.Payload) == "limit-once" && w.firstRun(k, r)
		w.mu.Lock()
		r.done, r.ended, r.ok = true, time.Now(), !fail && !limited && ctx.Err() == nil
		if job.Key != "" {
			w.keyRun[kk]--
		}
		w.mu.Unlock()
		switch {
		case fail:
			return errors.New("fails its first attempt")
		case limited:
			return worker.KeyLimited(50 * time.Millisecond) // the key waits too; no attempt is spent
		}
		return nil
	}
}

// start starts a daemon with the queues' target configurations.
func (w *world) start() *mdaemon {
	w.lastID++
	md := &mdaemon{id: w.lastID, rdb: w.connect(w.t), conf: map[string]mconf{}, done: make(chan error, 1), started: time.Now()}
	reg := worker.NewRegistry()
	for _, q := range w.queues {
		md.conf[q.name] = mconf{partitions: q.partitions, retention: q.retention}
		var h worker.Handler = w.handler(md.id)
		if q.kinds {
			k := worker.Kinds{}
			for _, kind := range modelKinds {
				k[kind] = h
			}
			h = k
		}
		err := reg.Register(q.name, h, worker.QueueOptions{
			Concurrency: 8, Partitions: q.partitions, IDRetention: q.retention, RateLimit: q.limit, KeyConcurrency: q.keyCap,
			MaxAttempts: 25, Backoff: worker.FixedSteps{10 * time.Millisecond},
		})
		if err != nil {
			w.t.Fatal(err)
		}
	}
	d, err := worker.NewDaemon(md.rdb, reg, w.cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	md.d = d
	ctx, cancel := context.WithCancel(context.WithoutCancel(w.t.Context()))
	md.cancel = cancel
	// A producer enqueues while the daemon starts, when it may change a
	// layout: none of its jobs may be refused.
	q := w.queues[w.rng.IntN(len(w.queues))]
	during := make(chan []worker.EnqueueResult, 1)
	stop := make(chan struct{})
	go func() {
		var out []worker.EnqueueResult
		defer func() { during <- out }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			id, err := w.c.Enqueue(w.t.Context(), worker.JobSpec{Queue: q.name})
			out = append(out, worker.EnqueueResult{ID: id, Err: err})
		}
	}()
	go func() { md.done <- d.Run(ctx) }()
	testkit.Eventually(w.t, 20*time.Second, fmt.Sprintf("daemon %d to run", md.id), d.Running)
	close(stop)
	for _, r := range <-during {
		if r.Err != nil {
			w.violation("%s/%s: enqueued while daemon %d started: %v", q.name, r.ID, md.id, r.Err)
			continue
		}
		w.jobs[q.name+"/"+r.ID] = append(w.jobs[q.name+"/"+r.ID], &mjob{queue: q.name, id: r.ID, accepted: time.Now(), retained: -1})
	}
	w.daemons = append(w.daemons, md)
	w.last = time.Now()
	w.note("start daemon %d %v", md.id, md.conf)
	return md
}

// stop stops md gracefully (SIGTERM): it drains and returns.
func (w *world) stop(md *mdaemon) {
	md.cancel()
	select {
	case err := <-md.done:
		if err != nil {
			w.violation("daemon %d: Run returned %v", md.id, err)
		}
	case <-time.After(30 * time.Second):
		w.t.Fatalf("daemon %d did not stop within 30s", md.id)
	}
	md.stopped = true
	w.daemons = slices.DeleteFunc(w.daemons, func(o *mdaemon) bool { return o == md })
	w.last = time.Now()
	w.note("stop daemon %d", md.id)
}

// kill stops md as kill -9 would: its connection is gone at once, and
// nothing it does after reaches Redis (its handlers run on, unheard).
func (w *world) kill(md *mdaemon) {
	md.rdb.Close()
	md.cancel()
	w.mu.Lock()
	md.killed, md.killAt = true, time.Now()
	w.mu.Unlock()
	w.killed = append(w.killed, md)
	w.daemons = slices.DeleteFunc(w.daemons, func(o *mdaemon) bool { return o == md })
	w.last = time.Now()
	w.note("kill daemon %d", md.id)
	w.t.Cleanup(func() { <-md.done })
}

// stopAll stops every daemon still running.
func (w *world) stopAll() {
	for len(w.daemons) > 0 {
		w.stop(w.daemons[0])
	}
}

// cut reports whether attempt r may have lost its outcome to a kill -9:
// its daemon was killed before it ended, or within ackMargin after (its
// ack may have been in flight); a claim that reached Redis after the kill
// (sent just before it) is one of those too.
func (w *world) cut(r mrun) bool {
	for _, md := range w.killed {
		if md.id == r.daemon {
			return !r.done || md.killAt.Before(r.ended.Add(ackMargin))
		}
	}
	return false
}

// settled reports whether every running daemon runs q with the same
// configuration and the last start or stop is old enough for its writes
// to have landed; it returns that configuration.
func (w *world) settled(q *mqueue) (mconf, bool) {
	if len(w.daemons) == 0 || time.Since(w.last) < 300*time.Millisecond {
		return mconf{}, false
	}
	c := w.daemons[0].conf[q.name]
	for _, md := range w.daemons[1:] {
		if md.conf[q.name] != c {
			return mconf{}, false
		}
	}
	return c, true
}

// homeOf is the partition of a job of partition key key, when q's layout
// is settled: its jobs key (partition 0 is in every layout); "" when
// unknown.
func (w *world) homeOf(q *mqueue, key string) string {
	c, ok := w.settled(q)
	if !ok {
		return ""
	}
	n, err := w.c.Partitions(w.t.Context(), q.name)
	if err != nil || n != c.partitions {
		return ""
	}
	return rediskeys.PartitionKeys(w.cfg.Prefix, q.name, n, rediskeys.PartitionOf(key, n)).Jobs
}

// runsOf returns a copy of the attempts of queue/id.
func (w *world) runsOf(k string) []mrun {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]mrun, len(w.runs[k]))
	for i, r := range w.runs[k] {
		out[i] = *r
	}
	return out
}

// queue returns the queue named name.
func (w *world) queue(name string) *mqueue {
	for _, q := range w.queues {
		if q.name == name {
			return q
		}
	}
	panic("no queue " + name)
}

// fail ends the seed with its violations and trail.
func (w *world) fail() {
	if len(w.bad) == 0 {
		return
	}
	tail := w.trail
	if len(tail) > 600 {
		tail = tail[len(tail)-600:]
	}
	logs := strings.Split(w.logs.String(), "\n")
	if len(logs) > 40 {
		logs = logs[len(logs)-40:]
	}
	w.t.Fatalf("%d violation(s):\n  %s\nlast steps:\n  %s\nlast warnings of the daemons:\n  %s", len(w.bad),
		strings.Join(w.bad, "\n  "), strings.Join(tail, "\n  "), strings.Join(logs, "\n  "))
}

// retried reports whether r is an attempt after the first.
func (r *mrun) retried() bool { return r.attempt > 1 }

// firstRun reports whether r is the first attempt recorded of k.
func (w *world) firstRun(k string, r *mrun) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.runs[k]) > 0 && w.runs[k][0] == r
}

// spread reports whether key has jobs, waiting or running, in more than one
// partition of queue, over every layout the model uses (1 to 4
// partitions); a failed read counts as spread.
func (w *world) spread(queue, key string) bool {
	ctx := context.WithoutCancel(w.t.Context())
	holding := map[string]bool{}
	for n := 1; n <= 4; n++ {
		for i := range n {
			k := rediskeys.PartitionKeys(w.cfg.Prefix, queue, n, i)
			if holding[k.KeyState] {
				continue
			}
			res := w.rdb.DoMulti(ctx,
				w.rdb.B().Hget().Key(k.KeyState).Field("r:"+key).Build(),
				w.rdb.B().Zscore().Key(k.KeyCount).Member(key).Build())
			for _, r := range res {
				if err := r.Error(); err == nil {
					holding[k.KeyState] = true
				} else if !rueidis.IsRedisNil(err) {
					return true
				}
			}
		}
	}
	return len(holding) > 1
}

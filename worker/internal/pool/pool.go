package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// Store is what the pool needs from Redis; *store.Store implements it.
type Store interface {
	ClaimWith(ctx context.Context, queue string, n int, lease time.Duration, o store.ClaimOptions) (store.Claimed, error)
	Ack(ctx context.Context, queue string, toks []store.Token) (int, error)
	Retry(ctx context.Context, queue string, tok store.Token, delay time.Duration, errText string) (bool, error)
	Kill(ctx context.Context, queue string, tok store.Token, errText string) (bool, error)
	Snooze(ctx context.Context, queue string, toks []store.Token, delay time.Duration) (int, error)
	SnoozeLimited(ctx context.Context, queue string, toks []store.Token, delay time.Duration) (int, error)
	Extend(ctx context.Context, byQueue map[string][]store.Renewal, lease time.Duration) (map[string][]store.Lost, error)
	Complete(ctx context.Context, queue string, done []store.Completion) (int, error)
	Subscribe(ctx context.Context, queues []string, onWake func(queue string, runAtMs int64), onCancel func(queue string, tok store.Token), onSubscribed func()) error
}

var _ Store = (*store.Store)(nil)

// Kind is what happens to a job after its handler returned.
type Kind int

// The outcomes of one attempt.
const (
	Ack    Kind = iota // done: delete it
	Retry              // back to due after Outcome.Delay, attempt spent
	Dead               // to the dead set
	Snooze             // back to due after Outcome.Delay, attempt not spent
)

// Result is the metrics outcome of an attempt that ended so: success,
// retry, dead or snooze (the words of courier_jobs_processed_total and of
// a consumer span's courier.job.outcome).
func (k Kind) Result() metrics.Outcome {
	switch k {
	case Ack:
		return metrics.OutcomeSuccess
	case Retry:
		return metrics.OutcomeRetry
	case Dead:
		return metrics.OutcomeDead
	}
	return metrics.OutcomeSnooze
}

// Outcome is the result of running one job.
type Outcome struct {
	Kind  Kind
	Delay time.Duration // for Retry and Snooze
	Err   string        // last error to record, for Retry and Dead
	// LimitKey, for a Snooze of a keyed job, limits its key for Delay too
	// (store.SnoozeLimited): no job of the key starts before then.
	LimitKey bool
}

// Exec runs one job. It must return when ctx ends (or soon after).
type Exec func(ctx context.Context, rec *store.Record) Outcome

// Abort gives the outcome of a job whose Exec never returned because it
// ended its goroutine (runtime.Goexit). The pool replaces the goroutine.
type Abort func(rec *store.Record) Outcome

// Queue is one queue the pool works on.
type Queue struct {
	Name string
	// Group joins the partitions of one queue: the queues of one Group
	// share its Concurrency (they must agree on it) and its handler
	// goroutines, take turns at them when several have jobs due, and are
	// named by the Group in metrics and logs. "" is a queue of its own.
	Group       string
	Concurrency int // handler goroutines, >= 1
	MaxAttempts int // applied to jobs without their own
	// RateLimit caps how many jobs of the queue all processes together
	// claim in any window of RateLimit.Per; zero = no limit.
	RateLimit store.Rate
	// Weights share each claim among the priority levels; zero = strict.
	Weights store.Weights
	// KeyCap caps the running jobs of one job key, across every process
	// (store.ClaimOptions.KeyCap); 0 = none.
	KeyCap int
	// KeyRate caps the starts of one job key per window, across every
	// process (store.ClaimOptions.KeyRate); zero = none.
	KeyRate store.Rate
	Exec    Exec
	// Abort decides for a job whose Exec called runtime.Goexit; nil retries
	// it after a second.
	Abort Abort
	// Retain keeps the queue's finished jobs, with their results, in the
	// completed set (Store.Complete) instead of deleting them (Store.Ack).
	Retain bool
	// Kinds is told the end of each attempt with its job, for the metrics
	// by kind of a queue that serves several; nil (every other queue)
	// costs nothing.
	Kinds KindObserver
}

// KindObserver is told when a job of a queue with several kinds ends, as
// Observer.Ended is; calls come from the workers' goroutines, concurrently.
type KindObserver interface {
	Ended(rec *store.Record, o metrics.Outcome, started bool, ran time.Duration)
}

// Observer is told when jobs start and end. Calls come from the workers'
// goroutines, concurrently.
type Observer interface {
	// Started is called before a job's Exec; lag is how long the job had
	// been due.
	Started(queue string, lag time.Duration)
	// Ended is called once per claimed job. started says whether Started
	// was called for it; ran is how long its Exec ran.
	Ended(queue string, o metrics.Outcome, started bool, ran time.Duration)
}

// RenewRound is how long a process holding jobs of the given lease may take
// to renew them once its calls get through to Redis again: one renewal
// interval (Lease/3) plus lock.Margin(lease) for the call itself. A leader
// waits that long before it recovers expired leases (carrier.Config.RenewGrace).
func RenewRound(lease time.Duration) time.Duration { return renewInterval(lease) + lock.Margin(lease) }

// renewInterval is how often a process renews the leases of the jobs it
// holds.
func renewInterval(lease time.Duration) time.Duration { return lease / 3 }

// Config tunes the pool. The durations and causes are required: their
// defaults are the public package's (worker.Config), not the pool's.
type Config struct {
	Lease           time.Duration // lease of a claimed job, renewed every Lease/3
	ShutdownTimeout time.Duration // how long running jobs may finish after Run's context ends
	PollInterval    time.Duration // safety poll of an idle queue
	// ReturnGrace is how long, after cancelling jobs at the shutdown
	// timeout, the pool waits for their handlers to return; 0 means 1s.
	ReturnGrace time.Duration
	// ShutdownCause, LeaseLostCause and CancelledCause are the causes
	// (context.Cause) a running job's context ends with at the shutdown
	// timeout, when its lease is lost and when it is cancelled (store.Cancel):
	// the public package's sentinels.
	ShutdownCause, LeaseLostCause, CancelledCause error
	Logger                                        *slog.Logger // default: discards
	Observer                                      Observer     // default: none
	// HardStop, once closed while Run drains, ends the drain as the
	// ShutdownTimeout would, at once (worker's Daemon.Stop, whose context
	// ended); nil never does.
	HardStop <-chan struct{}
	// Process is the running process's id, recorded with every claim so
	// that Get and List name the process running a job
	// (store.ClaimOptions.Process); "" records none, as the pool's tests on
	// the fake need none.
	Process string
}

const (
	// returnGrace is Config.ReturnGrace's default.
	returnGrace = time.Second
	// writeTimeout bounds the Redis writes that must happen even while
	// stopping (outcomes, hand-backs, final acks).
	writeTimeout = 10 * time.Second
)

// check returns c with ReturnGrace and Logger filled in, or the error of
// its first missing or invalid field.
func (c Config) check() (Config, error) {
	switch {
	case c.Lease < time.Millisecond:
		return c, fmt.Errorf("pool: Config.Lease %v: must be at least 1ms", c.Lease)
	case c.ShutdownTimeout <= 0:
		return c, fmt.Errorf("pool: Config.ShutdownTimeout %v: must be positive", c.ShutdownTimeout)
	case c.PollInterval <= 0:
		return c, fmt.Errorf("pool: Config.PollInterval %v: must be positive", c.PollInterval)
	case c.ReturnGrace < 0:
		return c, fmt.Errorf("pool: Config.ReturnGrace %v: must not be negative", c.ReturnGrace)
	case c.ShutdownCause == nil || c.LeaseLostCause == nil || c.CancelledCause == nil:
		return c, errors.New("pool: Config.ShutdownCause, Config.LeaseLostCause and Config.CancelledCause are required")
	}
	if c.ReturnGrace == 0 {
		c.ReturnGrace = returnGrace
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Pool runs jobs of several queues. Use New, then Run once.
type Pool struct {
	st     Store
	cfg    Config
	log    *slog.Logger
	queues map[string]*queue
	slots  []*slots // each queue's, shared by its partitions

	// baseCtx is Run's context without its cancellation: the parent of the
	// jobs' contexts and of the writes that must outlive Run's context. Jobs
	// do not register with a shared cancellable parent (a contended lock per
	// job); the hard stop cancels each running job instead.
	baseCtx context.Context

	// margin is how long before its lease may end in Redis a job is
	// cancelled when no renewal was confirmed: lock.Margin(Lease) (stopAt).
	margin     time.Duration
	renewEvery time.Duration // renewInterval(Lease)
	leaseSig   chan struct{} // runs whose lease ends before watchAt were dispatched
	// extendSig asks for a lease extension round now: the wake-up
	// subscription was (re)established, and a cancel published while it
	// was down was lost; the extension reports it.
	extendSig chan struct{}
	reportSig chan struct{} // a progress report waits (flushLoop)

	mu       sync.Mutex
	running  map[runKey]*run
	hard     bool         // past ShutdownTimeout: failures are handed back, not retried
	giveUp   bool         // past the hard stop's grace: outcome writes are not tried again
	watchAt  time.Time    // when the lease watch looks next
	finished atomic.Int64 // jobs that ended (any outcome) after the stop began
	stopping atomic.Bool
	returned int            // jobs handed back at the hard stop
	writes   sync.WaitGroup // outcome writes in flight
}

// runKey names a run in Pool.running: its queue (partition) and claim.
// Claim tokens never repeat within a queue, but two queues may hand out
// the same one: on a Cluster each takes its tokens from its own node's
// clock.
type runKey struct {
	queue string
	tok   store.Token
}

// key is r's key in Pool.running.
func (r *run) key() runKey { return runKey{r.q.Name, r.rec.Token()} }

// run is one claimed job, from claim to outcome. Its flags and lease
// deadline are guarded by Pool.mu.
type run struct {
	vctx   runCtx // the parent of ctx: the base context, with the run as a value
	q      *queue
	rec    store.Record
	ctx    context.Context
	cancel context.CancelCauseFunc
	// leaseUntil is a local, conservative estimate of the lease deadline:
	// the time a claim or renewal was sent plus the lease. Past it another
	// process may recover the job, so the run is cancelled.
	leaseUntil time.Time
	// lag is how long the job had been due when it was claimed (Redis
	// clock), claimed when the claim's answer arrived (local clock).
	lag     time.Duration
	claimed time.Time
	lost    bool // Redis reported the lease lost, or it ran out before the handler returned
	// cancelled: the job was cancelled while it ran (store.Cancel); it is in
	// the dead set already, and its outcome is not written.
	cancelled bool
	returned  bool // handed back at the hard stop: its outcome is ignored
	// acking: its outcome is an ack, waiting in its queue's batch. A lease
	// reported lost meanwhile is judged by the ack's answer (flushAcks):
	// most often the ack itself landed first, on a Cluster where the
	// extension of another node answered later.
	acking bool
	// settling: the handler returned and the outcome is being written; the
	// run stays in Pool.running, its lease renewed, until it is stored.
	settling bool
	// result is what the handler set as the job's result (Run.SetResult),
	// kept by a queue that retains its finished jobs.
	result atomic.Pointer[[]byte]
	// progress is the handler's last report not yet sent (Run.Report);
	// the next flush (flushLoop) or lease extension takes it.
	progress atomic.Pointer[store.Progress]
}

// New returns a pool for queues. Queue names must be unique, and each queue
// needs an Exec, Concurrency >= 1 and MaxAttempts >= 1.
func New(st Store, queues []Queue, cfg Config) (*Pool, error) {
	seen := make(map[string]bool, len(queues))
	limits := make(map[string]int)
	for _, q := range queues {
		if l, ok := limits[q.Group]; ok && q.Group != "" && l != q.Concurrency {
			return nil, fmt.Errorf("pool: the partitions of queue %q have different concurrency (%d and %d)", q.Group, l, q.Concurrency)
		}
		limits[q.Group] = q.Concurrency
		switch {
		case q.Name == "" || seen[q.Name]:
			return nil, fmt.Errorf("pool: queue name %q is empty or repeated", q.Name)
		case q.Exec == nil || q.Concurrency < 1 || q.MaxAttempts < 1:
			return nil, fmt.Errorf("pool: queue %q needs an Exec, Concurrency >= 1 and MaxAttempts >= 1", q.Name)
		case q.RateLimit != (store.Rate{}) && (q.RateLimit.N < 1 || q.RateLimit.Per < time.Millisecond):
			return nil, fmt.Errorf("pool: queue %q: a rate limit needs N >= 1 and Per >= 1ms", q.Name)
		}
		seen[q.Name] = true
	}
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		st:         st,
		cfg:        cfg,
		log:        cfg.Logger,
		queues:     make(map[string]*queue, len(queues)),
		running:    make(map[runKey]*run),
		margin:     lock.Margin(cfg.Lease),
		renewEvery: renewInterval(cfg.Lease),
		leaseSig:   make(chan struct{}, 1),
		extendSig:  make(chan struct{}, 1),
		reportSig:  make(chan struct{}, 1),
	}
	groups := make(map[string]*slots)
	for _, q := range queues {
		s := groups[q.Group]
		if s == nil || q.Group == "" {
			s = newSlots(q.Concurrency)
			p.slots = append(p.slots, s)
			if q.Group != "" {
				groups[q.Group] = s
			}
		}
		p.queues[q.Name] = newQueue(q, s)
		p.queues[q.Name].reportSig = p.reportSig
	}
	return p, nil
}

// hardStop is step 3 of Run's stop: it cancels the jobs still running,
// gives their handlers ReturnGrace to return (workersDone closes when
// all have), hands back what is still held and waits for the outcomes of
// those that returned in time.
func (p *Pool) hardStop(workersDone <-chan struct{}) {
	p.mu.Lock()
	p.hard = true
	for _, r := range p.running {
		r.cancel(p.cfg.ShutdownCause)
	}
	p.mu.Unlock()
	grace := time.NewTimer(p.cfg.ReturnGrace)
	select {
	case <-workersDone:
	case <-grace.C:
	}
	grace.Stop()
	p.handBack()
	p.mu.Lock()
	p.giveUp = true // a write still failing now is settled by recovery
	p.mu.Unlock()
	p.writes.Wait() // outcomes of the handlers that returned in time
}

// Summary counts what a stopped pool did while stopping.
type Summary struct {
	Finished int // jobs that ended normally after the stop began
	Returned int // jobs handed back to due at the hard stop
}

// Run works until ctx ends, then stops as the package doc describes and
// returns nil. It returns an error only if it cannot start.
func (p *Pool) Run(ctx context.Context) (Summary, error) {
	if len(p.queues) == 0 {
		return Summary{}, errors.New("pool: no queues")
	}
	p.baseCtx = context.WithoutCancel(ctx)

	var claimers, workers, background sync.WaitGroup
	names := make([]string, 0, len(p.queues))
	for _, q := range p.queues {
		names = append(names, q.Name)
		claimers.Go(func() { p.claimLoop(ctx, q) })
	}
	for _, s := range p.slots {
		for range s.limit {
			workers.Go(func() { p.work(s, &workers) })
		}
	}
	background.Go(func() { p.subscribeLoop(ctx, names) })
	var leases, ackers sync.WaitGroup
	leaseCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	leases.Go(func() { p.extendLoop(leaseCtx) })
	leases.Go(func() { p.leaseWatch(leaseCtx) })
	leases.Go(func() { p.flushLoop(leaseCtx) })
	ackerStop := make(chan struct{})
	for _, q := range p.queues {
		ackers.Go(func() { p.ackLoop(q, ackerStop) })
	}

	<-ctx.Done()
	p.stopping.Store(true)
	// 1. Stop claiming. Claims in flight complete and their jobs run.
	claimers.Wait()
	for _, s := range p.slots {
		close(s.jobs)
	}
	// 2. Let running jobs finish, up to the shutdown timeout.
	workersDone := make(chan struct{})
	go func() { workers.Wait(); close(workersDone) }()
	deadline := time.NewTimer(p.cfg.ShutdownTimeout)
	defer deadline.Stop()
	select {
	case <-workersDone:
	case <-deadline.C:
		p.hardStop(workersDone)
	case <-p.cfg.HardStop:
		p.hardStop(workersDone)
	}
	// 4. Flush the acks while the leases are still renewed, then stop the
	// lease loops and the background loops.
	close(ackerStop)
	ackers.Wait()
	stopLeases()
	leases.Wait()
	background.Wait()
	p.mu.Lock()
	s := Summary{Finished: int(p.finished.Load()), Returned: p.returned}
	p.mu.Unlock()
	p.log.Info("worker pool stopped", "finished", s.Finished, "returned", s.Returned)
	return s, nil
}

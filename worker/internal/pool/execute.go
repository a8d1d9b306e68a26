package pool

import (
	"context"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// work runs the jobs of a queue's slots until their channel closes. If a job's Exec ends
// the goroutine (runtime.Goexit), execute settles the job and work starts a
// replacement, so the queue keeps its concurrency.
func (p *Pool) work(s *slots, workers *sync.WaitGroup) {
	for r := range s.jobs {
		p.execute(r, func() { workers.Go(func() { p.work(s, workers) }) })
	}
}

// execute runs one claimed job and settles its outcome. respawn is called
// when Exec did not return.
func (p *Pool) execute(r *run, respawn func()) {
	var (
		o        Outcome
		start    time.Time // zero if Exec was never called
		returned bool
	)
	defer func() {
		if !returned {
			p.log.Error("a handler called runtime.Goexit instead of returning; the job counts as failed",
				"queue", r.q.Name, "job", r.rec.ID)
			o = Outcome{Kind: Retry, Delay: time.Second, Err: "handler called runtime.Goexit instead of returning"}
			if r.q.Abort != nil {
				o = r.q.Abort(&r.rec)
			}
			respawn()
		}
		r.cancel(nil)
		res := p.settle(r, o)
		if obs := p.cfg.Observer; obs != nil {
			if start.IsZero() {
				obs.Ended(r.q.label(), metrics.OutcomeCancelled, false, 0)
			} else {
				obs.Ended(r.q.label(), res, true, time.Since(start))
			}
		}
		if k := r.q.Kinds; k != nil { // a queue of several kinds only
			if start.IsZero() {
				k.Ended(&r.rec, metrics.OutcomeCancelled, false, 0)
			} else {
				k.Ended(&r.rec, res, true, time.Since(start))
			}
		}
		r.q.slots.release(1)
	}()
	if context.Cause(r.ctx) != nil {
		// Cancelled before it started (the hard stop, or a lost lease, hit
		// it while it waited for this goroutine, or its claim was answered
		// too late: see dispatch): never start it. At the hard stop settle
		// hands it back; with a lost lease the write is a no-op.
		o, returned = Outcome{Kind: Snooze}, true
		return
	}
	start = time.Now()
	if obs := p.cfg.Observer; obs != nil {
		obs.Started(r.q.label(), r.lag+start.Sub(r.claimed))
	}
	o = r.q.Exec(r.ctx, &r.rec)
	returned = true
}

// settle writes the outcome of a job to Redis and says how the attempt
// ended. Acks are batched by the queue's ack loop; the rarer outcomes are
// written at once. Until its outcome is stored the job stays held and its
// lease renewed, so a Redis blip does not make it run again. The writes
// outlive Run's context: a job that finished must not be run again because
// the process was stopping.
func (p *Pool) settle(r *run, o Outcome) metrics.Outcome {
	p.mu.Lock()
	if r.returned {
		p.mu.Unlock()
		return metrics.OutcomeCancelled // already handed back at the hard stop
	}
	if r.cancelled {
		// Cancelled while it ran: the job is in the cancelled set, and any write
		// would find its claim gone.
		if p.stopping.Load() {
			p.finished.Add(1)
		}
		p.forget(r)
		p.mu.Unlock()
		return metrics.OutcomeCancelled
	}
	handBack := p.hard && o.Kind != Ack
	res := o.Kind.Result()
	if handBack || (r.lost && o.Kind != Ack) {
		res = metrics.OutcomeCancelled
	}
	if handBack {
		// Cancelled by the shutdown, not failed: give the attempt back.
		o = Outcome{Kind: Snooze}
	} else if p.stopping.Load() {
		p.finished.Add(1)
	}
	r.settling = true
	if o.Kind == Ack {
		r.acking = true
		r.q.acks = append(r.q.acks, r)
		p.mu.Unlock()
		signal(r.q.ackSig)
		return res
	}
	p.writes.Add(1) // under mu, so the hard stop waits for it
	p.mu.Unlock()
	defer p.writes.Done()

	moved, err := p.persist(r, func(ctx context.Context) (bool, error) {
		tok := r.rec.Token()
		switch o.Kind {
		case Retry:
			return p.st.Retry(ctx, r.q.Name, tok, o.Delay, o.Err)
		case Dead:
			return p.st.Kill(ctx, r.q.Name, tok, o.Err)
		}
		snooze := p.st.Snooze
		if o.LimitKey {
			snooze = p.st.SnoozeLimited
		}
		n, err := snooze(ctx, r.q.Name, []store.Token{tok}, o.Delay)
		return n == 1, err
	})
	p.mu.Lock()
	p.forget(r)
	if handBack && moved {
		p.returned++
	}
	p.mu.Unlock()
	if err != nil {
		// The job stays active; its lease expires and recovery returns it.
		p.log.Error("record job outcome; the job will be recovered when its lease expires",
			"queue", r.q.Name, "job", r.rec.ID, "err", err)
	}
	return res
}

// persist calls write until it succeeds, Redis refuses it as a bad call,
// Redis reports the run's lease lost (another process may hold the job, and
// recovery settles it), or the hard stop's grace has passed. Each try is
// bounded by writeTimeout; while it tries, the run stays held and its lease
// renewed. Writes carry the claim token, so a try whose outcome was unknown
// is harmless to send again. It returns write's last result.
func (p *Pool) persist(r *run, write func(ctx context.Context) (bool, error)) (bool, error) {
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(p.baseCtx, writeTimeout)
		moved, err := write(ctx)
		cancel()
		if err == nil || refused(err) {
			return moved, err
		}
		p.mu.Lock()
		gone := r.lost || p.giveUp
		p.mu.Unlock()
		if gone {
			return moved, err
		}
		p.log.Warn("record job outcome; trying again, the lease is kept meanwhile",
			"queue", r.q.Name, "job", r.rec.ID, "failures", attempt, "err", err)
		sleepCtx(p.baseCtx, errorBackoff(attempt))
	}
}

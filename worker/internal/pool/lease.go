package pool

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// extendLoop renews the leases of every job the process holds, in one
// batched call every Lease/3: the jobs that run and the jobs whose outcome
// is still being written, so a finished job is not recovered and run again
// while its ack waits for Redis. A queue whose call fails keeps its old
// deadlines; the other queues' leases move on. It cancels (cause
// Config.LeaseLostCause, or Config.CancelledCause for a job cancelled while
// it ran, when the cancel's message was missed) the jobs whose lease Redis
// reports lost;
// leaseWatch cancels those whose lease runs out unrenewed.
func (p *Pool) extendLoop(ctx context.Context) {
	t := time.NewTicker(p.renewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.extendSig:
		}
		p.extendRound(ctx, false)
	}
}

// extendRound renews, in one batched call, the leases of the runs the
// process holds, with their pending progress reports; only those with a
// report when reports is set (flushLoop). It handles the answer as
// extendLoop says.
func (p *Pool) extendRound(ctx context.Context, reports bool) {
	byQueue := make(map[string][]store.Renewal)
	p.mu.Lock()
	for _, r := range p.running {
		if !r.lost && (!reports || r.progress.Load() != nil) {
			byQueue[r.q.Name] = append(byQueue[r.q.Name], r.renewal())
		}
	}
	p.mu.Unlock()
	if len(byQueue) == 0 {
		return
	}
	every := p.renewEvery
	sent := time.Now()
	callCtx, cancel := context.WithTimeout(ctx, every)
	lost, err := p.st.Extend(callCtx, byQueue, p.cfg.Lease)
	cancel()
	if err != nil && ctx.Err() == nil {
		p.log.Warn("extend job leases", "err", err)
	}
	failed, all := store.FailedQueues(err)
	answered, answeredAll := answeredQueues(err)
	p.mu.Lock()
	for queue, toks := range lost {
		for _, l := range toks {
			r := p.running[runKey{queue, l.Token}]
			switch {
			case r == nil:
			case l.Cancelled:
				p.cancelled(r)
			default:
				p.loseLease(r, "lease lost: the job was recovered or claimed again")
			}
		}
	}
	for queue, rs := range byQueue {
		for _, rn := range rs {
			r := p.running[runKey{queue, rn.Token}]
			switch {
			case r == nil || r.lost:
			case all || failed[queue]:
				if !answeredAll && !answered[queue] {
					r.unsent(rn)
				}
			default:
				r.leaseUntil = sent.Add(p.cfg.Lease)
			}
		}
	}
	p.mu.Unlock()
}

// leaseWatch cancels every running job whose lease was not renewed in time,
// on its own timer: a job ends p.margin (lock.Margin(Lease)) before the
// earliest moment its lease may end in Redis, where another process may
// recover and start it. The deadline is local and conservative: the time
// the claim or last confirmed renewal was sent, plus the lease. A job whose
// handler already returned is not cancelled: its outcome write goes on, and
// only Redis saying the lease is lost ends it.
func (p *Pool) leaseWatch(ctx context.Context) {
	t := time.NewTimer(p.renewEvery)
	defer t.Stop()
	p.mu.Lock()
	p.watchAt = time.Now().Add(p.renewEvery)
	p.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.leaseSig: // new runs whose deadline comes first
			t.Stop()
		}
		next := p.renewEvery
		now := time.Now()
		p.mu.Lock()
		for _, r := range p.running {
			if r.lost || r.settling {
				continue
			}
			end := p.stopAt(r.leaseUntil)
			if !now.Before(end) {
				p.loseLease(r, "lease ran out: it could not be renewed in time")
				continue
			}
			next = min(next, end.Sub(now))
		}
		p.watchAt = now.Add(next)
		p.mu.Unlock()
		t.Reset(next)
	}
}

// loseLease marks a run's lease lost, once, and cancels its handler if it
// still runs. p.mu must be held.
func (p *Pool) loseLease(r *run, why string) {
	if r.lost {
		return
	}
	r.lost = true
	if r.acking {
		return // flushAcks tells, if the ack finds the job gone
	}
	if r.settling {
		p.log.Warn(why+"; its outcome may not be stored and it may run again",
			"queue", r.q.Name, "job", r.rec.ID)
		return
	}
	p.log.Warn(why+"; cancelling the job", "queue", r.q.Name, "job", r.rec.ID)
	r.cancel(p.cfg.LeaseLostCause)
}

// cancelRun ends the run of tok of queue, if this process holds it: the
// job was cancelled while it ran (the cancel's message on the wake
// channel). The message names the claim it ended, so one that arrives late
// ends no later run of the job. A message of a version that named no claim
// (tok.Claim 0) ends every run of the id, as it did there.
func (p *Pool) cancelRun(queue string, tok store.Token) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tok.Claim != 0 {
		if r := p.running[runKey{queue, tok}]; r != nil {
			p.cancelled(r)
		}
		return
	}
	for k, r := range p.running {
		if k.tok.ID == tok.ID && k.queue == queue {
			p.cancelled(r)
		}
	}
}

// cancelled ends a run whose job was cancelled (cause
// Config.CancelledCause). The job is in the cancelled set already and its claim
// gone: the run's outcome is not written, and its lease no longer renewed.
// Called with p.mu held.
func (p *Pool) cancelled(r *run) {
	if r.cancelled {
		return
	}
	r.cancelled, r.lost = true, true
	if r.settling {
		return // the handler returned first: its outcome's write is stale, and harmless
	}
	p.log.Info("job cancelled while it ran; ending its handler", "queue", r.q.Name, "job", r.rec.ID)
	r.cancel(p.cfg.CancelledCause)
}

// stopAt is when a job whose lease was last confirmed to end at leaseUntil
// must stop: p.margin before, so it ends before another process may start
// it.
func (p *Pool) stopAt(leaseUntil time.Time) time.Time { return leaseUntil.Add(-p.margin) }

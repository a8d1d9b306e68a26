package pool

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// ackLoop writes the queue's batched acks whenever some are pending, until
// stop is closed, then writes what is left within writeTimeout. Each queue
// has its own, so a queue whose Redis node is unreachable delays no other
// queue's acks. A failed write is tried again after a backoff; meanwhile
// the jobs stay held and their leases renewed, so they are not run again.
func (p *Pool) ackLoop(q *queue, stop <-chan struct{}) {
	failures := 0
	for {
		select {
		case <-q.ackSig:
		case <-stop:
			p.finalAcks(q)
			return
		}
		ctx, cancel := context.WithTimeout(p.baseCtx, writeTimeout)
		err := p.flushAcks(ctx, q)
		cancel()
		if err == nil {
			failures = 0
			continue
		}
		failures++
		p.log.Warn("ack jobs; trying again, their leases are kept meanwhile",
			"queue", q.Name, "failures", failures, "err", err)
		// at least once per renewal round, so that acks land soon after
		// Redis is back (the leases of the jobs they hold are renewed
		// meanwhile, but the slots stay taken)
		t := time.NewTimer(min(errorBackoff(failures), p.renewEvery))
		select {
		case <-t.C:
			signal(q.ackSig)
		case <-stop:
			t.Stop()
			p.finalAcks(q)
			return
		}
	}
}

// finalAcks writes the acks left at the stop, trying again until they are
// stored or writeTimeout passes.
func (p *Pool) finalAcks(q *queue) {
	ctx, cancel := context.WithTimeout(p.baseCtx, writeTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := p.flushAcks(ctx, q)
		if err == nil {
			return
		}
		if refused(err) || !sleepCtx(ctx, errorBackoff(attempt)) {
			p.mu.Lock()
			n := len(q.acks)
			for _, r := range q.acks {
				p.forget(r)
			}
			q.acks = nil
			p.mu.Unlock()
			p.log.Error("ack jobs at the stop; they will run again when their leases expire",
				"queue", q.Name, "jobs", n, "err", err)
			return
		}
	}
}

// flushAcks writes the queue's pending acks in one call. On success the
// jobs are forgotten; on failure they stay pending (and held), except those
// whose lease Redis reported lost meanwhile, and when Redis refused the call
// as a bad one, which sending again cannot fix.
func (p *Pool) flushAcks(ctx context.Context, q *queue) error {
	p.mu.Lock()
	pending := q.acks
	q.acks = nil
	p.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	acked, err := p.ack(ctx, q, pending)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && acked < len(pending) {
		// Some were not held any more: among them the runs whose lease an
		// extension reported lost (recovered or claimed again elsewhere).
		for _, r := range pending {
			if r.lost {
				p.log.Warn("lease lost before the ack was stored: the job was recovered or claimed again; it may run again",
					"queue", q.label(), "partition", q.Name, "job", r.rec.ID)
			}
		}
	}
	if err == nil || refused(err) {
		for _, r := range pending {
			p.forget(r)
		}
		if err != nil {
			p.log.Error("ack jobs: Redis refused the call; they will run again when their leases expire",
				"queue", q.Name, "jobs", len(pending), "err", err)
		}
		return nil
	}
	keep := pending[:0]
	for _, r := range pending {
		if r.lost {
			p.forget(r) // recovered or claimed again: the ack would change nothing
			continue
		}
		keep = append(keep, r)
	}
	q.acks = append(keep, q.acks...)
	return err
}

// ack writes the outcome of finished runs: deleted (Store.Ack), or kept
// with their results in the completed set when the queue retains them
// (Store.Complete).
func (p *Pool) ack(ctx context.Context, q *queue, runs []*run) (int, error) {
	if q.Retain {
		done := make([]store.Completion, len(runs))
		for i, r := range runs {
			done[i] = store.Completion{Token: r.rec.Token()}
			if b := r.result.Load(); b != nil {
				done[i].Result = *b
			}
		}
		return p.st.Complete(ctx, q.Name, done)
	}
	toks := make([]store.Token, len(runs))
	for i, r := range runs {
		toks[i] = r.rec.Token()
	}
	return p.st.Ack(ctx, q.Name, toks)
}

// forget drops a settled run from the running set. p.mu must be held.
func (p *Pool) forget(r *run) {
	if k := r.key(); p.running[k] == r {
		delete(p.running, k)
	}
}

// refused reports whether Redis answered err as a bad call (an "ERR" or
// "WRONGTYPE" reply): sending the same call again would fail the same way.
// Every other error (a network error, a timeout, a reply such as LOADING,
// TRYAGAIN, OOM or READONLY) may pass on the next try.
func refused(err error) bool {
	var re *rueidis.RedisError
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "ERR") || strings.HasPrefix(msg, "WRONGTYPE")
}

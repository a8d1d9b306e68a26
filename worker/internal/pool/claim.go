package pool

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// claimLoop claims due jobs whenever there are free slots and jobs may be
// due, and otherwise sleeps until the earliest reason to look again. When
// the queue's rate limit holds due jobs back, it sleeps until the window
// frees capacity; wake-ups, freed slots and polls meanwhile do not claim.
// A paused queue sleeps as an empty one does, until the next wake-up (the
// resume publishes one), head timer or safety poll.
func (p *Pool) claimLoop(ctx context.Context, q *queue) {
	poll := time.NewTicker(p.cfg.PollInterval)
	defer poll.Stop()
	head := newHeadTimer()
	defer head.stop()
	rate := time.NewTimer(time.Hour)
	rate.Stop()
	defer rate.Stop()

	maybeDue := true
	backlog := false       // the last claim left due jobs behind
	limited := false       // the rate limit is used up until rate fires
	var skew time.Duration // Redis clock minus local clock, from the last claim
	failures := 0
	for {
		if ctx.Err() != nil {
			return
		}
		q.want(maybeDue && !limited)
		free := q.slots.free()
		canClaim := maybeDue && !limited && free > 0
		if canClaim && free < q.gather() && backlog {
			// A backlog is waiting and few slots are free: let a few more
			// jobs finish so that one claim fills many slots, but never let
			// a free slot idle for more than gatherWait.
			if !q.waitFreed(ctx, gatherWait) {
				return
			}
			backlog = false
			continue
		}
		if canClaim {
			// The slots are reserved before the claim, so that the
			// partitions of a queue never claim more than it may run;
			// none when it is another partition's turn (see slots).
			free = q.slots.take(q, free)
			canClaim = free > 0
		}
		if canClaim {
			// A claim is not abandoned when ctx ends: its jobs are recorded
			// as active in Redis, so it is let finish, within a bound.
			sent := time.Now()
			claimCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
			c, err := p.st.ClaimWith(claimCtx, q.Name, free, p.cfg.Lease, store.ClaimOptions{Rate: q.RateLimit, Weights: q.Weights, Process: p.cfg.Process, KeyCap: q.KeyCap, KeyRate: q.KeyRate, Weigh: q.Group != ""})
			cancel()
			q.slots.release(free - len(c.Jobs)) // c is zero on error
			q.slots.claimed(q, free, len(c.Jobs), c.Weight)
			if err != nil {
				failures++
				q.want(false) // the other partitions take their turns meanwhile
				p.log.Warn("claim failed", "queue", q.label(), "partition", q.Name, "err", err, "failures", failures)
				if !sleepCtx(ctx, min(errorBackoff(failures), claimBackoffMax)) {
					return
				}
				continue
			}
			failures = 0
			skew = time.Until(c.Now)
			p.dispatch(q, c, sent.Add(p.cfg.Lease))
			if c.Paused {
				// Nothing is claimed by anyone until the resume, whose
				// wake-up makes maybeDue true again; freed slots meanwhile
				// do not claim. The pause message itself costs one claim,
				// which reports the pause.
				maybeDue, backlog = false, false
				continue
			}
			if c.Limited {
				// Jobs are due, or will be before the window frees
				// capacity: nothing can be claimed until then, by anyone.
				limited, backlog = true, false
				rate.Reset(max(time.Until(c.Next.Add(-skew)), minSleep))
				continue
			}
			// More jobs are due when the new head is not in the future.
			maybeDue = !c.Next.IsZero() && !c.Next.After(c.Now)
			backlog = maybeDue
			if !maybeDue && !c.Next.IsZero() {
				head.arm(c.Next, skew)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-q.freed:
		case <-q.wakeSig:
			at := q.takeWake()
			if at <= 0 || !time.UnixMilli(at).After(time.Now().Add(skew)) {
				maybeDue = true
			} else {
				head.arm(time.UnixMilli(at), skew)
			}
		case <-head.c():
			head.fired()
			maybeDue = true
		case <-rate.C:
			limited, maybeDue = false, true
		case <-poll.C:
			maybeDue = true
		}
	}
}

// claimBackoffMax caps the wait between failed claims: a claim that fails
// costs Redis nothing, and after a failover the first claims still go to
// the dead master for a moment (the client's slot map is a little stale),
// so a longer wait would hold the queue's jobs back seconds after Redis is
// back.
const claimBackoffMax = time.Second

// gatherWait bounds how long a claim waits for more free slots when a
// backlog is waiting (see claimLoop).
const gatherWait = time.Millisecond

// dispatch registers claimed jobs and hands them to the workers.
// leaseUntil is the local estimate of their lease deadline.
func (p *Pool) dispatch(q *queue, c store.Claimed, leaseUntil time.Time) {
	if c.Corrupt > 0 {
		p.log.Error("corrupt job records moved to the dead set", "queue", q.Name, "jobs", c.Corrupt)
	}
	if len(c.Bad) > 0 {
		ctx, cancel := context.WithTimeout(p.baseCtx, writeTimeout)
		for _, b := range c.Bad {
			p.log.Error("job record does not decode; moving it to the dead set", "queue", q.Name, "job", b.Token.ID, "err", b.Err)
			if _, err := p.st.Kill(ctx, q.Name, b.Token, "decode: "+b.Err.Error()); err != nil {
				p.log.Error("kill undecodable job; its lease will expire", "queue", q.Name, "job", b.Token.ID, "err", err)
			}
		}
		cancel()
	}
	if len(c.Jobs) == 0 {
		return
	}
	runs := make([]*run, len(c.Jobs))
	now := time.Now()
	late := !now.Before(p.stopAt(leaseUntil))
	p.mu.Lock()
	for i := range c.Jobs {
		r := &run{q: q, rec: c.Jobs[i], leaseUntil: leaseUntil, claimed: now, lag: max(c.Now.Sub(c.Jobs[i].RunAt), 0)}
		r.vctx = runCtx{Context: p.baseCtx, r: r}
		r.ctx, r.cancel = context.WithCancelCause(&r.vctx)
		if old := p.running[r.key()]; old != nil {
			// Claim tokens never repeat in Redis; if one did (a Redis restored
			// from an old copy), two runs must not share one entry.
			p.loseLease(old, "the same claim was handed out twice")
		}
		p.running[r.key()] = r
		runs[i] = r
		if late {
			// The claim was answered after its lease minus the margin (a
			// connection that stalled after Redis ran the claim): the leader
			// may already have recovered the jobs and another process
			// started them. They are never started here.
			p.loseLease(r, "the claim was answered too late: its lease may have ended")
		}
	}
	// The lease watch looks again only when these leases end before its next
	// look, which is rare (a claim answered after two thirds of the lease):
	// a wake-up per claim would scan every run under the lock.
	wake := !late && p.stopAt(leaseUntil).Before(p.watchAt)
	p.mu.Unlock()
	if wake {
		signal(p.leaseSig)
	}
	for _, r := range runs {
		q.slots.jobs <- r // never blocks: their slots were reserved
	}
}

// headTimer fires when the queue's head job becomes due.
type headTimer struct {
	t  *time.Timer
	at time.Time // Redis time it is armed for; zero when idle
}

func newHeadTimer() *headTimer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &headTimer{t: t}
}

// minSleep keeps a loop from spinning when the head is due within the clock
// skew estimate; Redis decides what is due, so waking early only costs a claim.
const minSleep = 200 * time.Microsecond

// arm makes the timer fire at Redis time at, unless it fires earlier already.
func (h *headTimer) arm(at time.Time, skew time.Duration) {
	if !h.at.IsZero() && !at.Before(h.at) {
		return
	}
	h.at = at
	h.t.Reset(max(time.Until(at.Add(-skew)), minSleep))
}

func (h *headTimer) c() <-chan time.Time { return h.t.C }

func (h *headTimer) fired() { h.at = time.Time{} }

func (h *headTimer) stop() { h.t.Stop() }

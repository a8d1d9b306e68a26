package pool

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// extendLoop renews the leases of every job the process holds, in one
// batched call every Lease/3. It cancels (cause Config.LeaseLostCause) the jobs whose
// lease Redis reports lost, and the jobs whose lease could not be renewed
// before it ran out, since another process may recover them then.
func (p *Pool) extendLoop(ctx context.Context) {
	every := p.cfg.Lease / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		byQueue := make(map[string][]store.Token)
		p.mu.Lock()
		for tok, r := range p.running {
			if !r.lost {
				byQueue[r.q.Name] = append(byQueue[r.q.Name], tok)
			}
		}
		p.mu.Unlock()
		if len(byQueue) == 0 {
			continue
		}
		sent := time.Now()
		callCtx, cancel := context.WithTimeout(ctx, every)
		lost, err := p.st.Extend(callCtx, byQueue, p.cfg.Lease)
		cancel()
		if err != nil && ctx.Err() == nil {
			p.log.Warn("extend job leases", "err", err)
		}
		p.mu.Lock()
		for _, toks := range lost {
			for _, tok := range toks {
				if r := p.running[tok]; r != nil {
					p.loseLease(r, "lease lost: the job was recovered or claimed again")
				}
			}
		}
		if err == nil {
			for _, toks := range byQueue {
				for _, tok := range toks {
					if r := p.running[tok]; r != nil && !r.lost {
						r.leaseUntil = sent.Add(p.cfg.Lease)
					}
				}
			}
		}
		now := time.Now()
		for _, r := range p.running {
			if !r.lost && !now.Before(r.leaseUntil) {
				p.loseLease(r, "lease ran out: it could not be renewed in time")
			}
		}
		p.mu.Unlock()
	}
}

// loseLease cancels a run whose lease is lost, once. p.mu must be held.
func (p *Pool) loseLease(r *run, why string) {
	if r.lost {
		return
	}
	r.lost = true
	p.log.Warn(why+"; cancelling the job", "queue", r.q.Name, "job", r.rec.ID)
	r.cancel(p.cfg.LeaseLostCause)
}

package pool

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// extendLoop renews the leases of every job the process holds, in one
// batched call every Lease/3, and cancels the jobs whose lease was lost.
func (p *Pool) extendLoop(ctx context.Context) {
	t := time.NewTicker(p.cfg.Lease / 3)
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
			byQueue[r.q.Name] = append(byQueue[r.q.Name], tok)
		}
		p.mu.Unlock()
		if len(byQueue) == 0 {
			continue
		}
		lost, err := p.st.Extend(ctx, byQueue, p.cfg.Lease)
		if err != nil && ctx.Err() == nil {
			p.log.Warn("extend job leases", "err", err)
		}
		if len(lost) == 0 {
			continue
		}
		p.mu.Lock()
		for queue, ids := range lost {
			for _, id := range ids {
				for tok, r := range p.running {
					if tok.ID == id && r.q.Name == queue {
						p.log.Warn("job lease lost; cancelling it", "queue", queue, "job", id)
						r.cancel(ErrLeaseLost)
					}
				}
			}
		}
		p.mu.Unlock()
	}
}

// recoverLoop returns jobs whose lease expired (their worker died) to due,
// about once per RecoverInterval.
func (p *Pool) recoverLoop(ctx context.Context, q *queue) {
	t := time.NewTicker(p.cfg.RecoverInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			r, err := p.st.Recover(ctx, q.Name, recoverLimit, q.MaxAttempts)
			if err != nil {
				if ctx.Err() == nil {
					p.log.Warn("recover expired leases", "queue", q.Name, "err", err)
				}
				break
			}
			if r.Due+r.Dead > 0 {
				p.log.Info("recovered jobs with expired leases", "queue", q.Name, "due", r.Due, "dead", r.Dead)
			}
			if r.Due+r.Dead < recoverLimit || ctx.Err() != nil {
				break
			}
		}
	}
}

// subscribeLoop keeps the wake-up subscription open until ctx ends. Each
// (re)subscription makes every queue look for due jobs, since messages sent
// while it was down are lost.
func (p *Pool) subscribeLoop(ctx context.Context, names []string) {
	onWake := func(name string, at int64) {
		if q := p.queues[name]; q != nil {
			q.wake(at)
		}
	}
	onSubscribed := func() {
		for _, q := range p.queues {
			q.wake(0)
		}
	}
	for failures := 1; ; failures++ {
		err := p.st.Subscribe(ctx, names, onWake, onSubscribed)
		if ctx.Err() != nil {
			return
		}
		p.log.Warn("wake-up subscription broke; safety polls continue", "err", err)
		if !sleepCtx(ctx, errorBackoff(failures)) {
			return
		}
	}
}

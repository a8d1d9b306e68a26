package pool

import (
	"context"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// handBack returns every job still running to due without spending its
// attempt. Jobs whose handler returned are left to their outcome writes.
func (p *Pool) handBack() {
	byQueue := make(map[string][]store.Token)
	p.mu.Lock()
	for k, r := range p.running {
		if r.settling {
			continue
		}
		r.returned = true
		byQueue[k.queue] = append(byQueue[k.queue], k.tok)
		delete(p.running, k)
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.baseCtx, writeTimeout)
	defer cancel()
	for queue, toks := range byQueue {
		n, err := p.st.Snooze(ctx, queue, toks, 0)
		// Jobs not moved were no longer held (their lease was lost).
		if err != nil {
			p.log.Error("hand back jobs at shutdown; their leases will expire and recover them",
				"queue", queue, "jobs", len(toks), "err", err)
		}
		p.mu.Lock()
		p.returned += n
		p.mu.Unlock()
	}
}

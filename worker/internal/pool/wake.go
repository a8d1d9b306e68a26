package pool

import (
	"context"
	"sync/atomic"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// subscribeLoop keeps the wake-up subscription open until ctx ends. Each
// (re)subscription makes every queue look for due jobs, and each
// resubscription runs a lease extension round (which reports jobs cancelled
// while they ran), since messages sent while it was down are lost.
func (p *Pool) subscribeLoop(ctx context.Context, names []string) {
	onWake := func(name string, at int64) {
		if q := p.queues[name]; q != nil {
			q.wake(at)
		}
	}
	onCancel := func(name string, tok store.Token) {
		if p.queues[name] != nil {
			p.cancelRun(name, tok)
		}
	}
	var subscriptions atomic.Int32
	onSubscribed := func() {
		for _, q := range p.queues {
			q.wake(0)
		}
		// A cancel of a running job published while the subscription was
		// down is lost too: an extension round now reports it. (Before the
		// first subscription, in the first moments of Run, the jobs just
		// claimed learn of a cancel at the first regular round.)
		if subscriptions.Add(1) > 1 {
			signal(p.extendSig)
		}
	}
	var failures atomic.Int32
	subscribed := func() {
		failures.Store(0) // a working subscription resets the backoff
		onSubscribed()
	}
	for {
		err := p.st.Subscribe(ctx, names, onWake, onCancel, subscribed)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			// The server ended it: on a Cluster, a sharded subscription
			// ends when its slot moves to another node.
			p.log.Info("wake-up subscription ended by the server (a slot moved?); subscribing again")
		} else {
			p.log.Warn("wake-up subscription broke; safety polls continue", "err", err)
		}
		if !sleepCtx(ctx, errorBackoff(int(failures.Add(1)))) {
			return
		}
	}
}

// wake records that a job due at runAtMs (Redis ms; 0 = now) was announced.
func (q *queue) wake(runAtMs int64) {
	q.mu.Lock()
	if q.wakeAt < 0 || runAtMs < q.wakeAt {
		q.wakeAt = runAtMs
	}
	q.mu.Unlock()
	signal(q.wakeSig)
}

func (q *queue) takeWake() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	at := q.wakeAt
	q.wakeAt = -1
	return at
}

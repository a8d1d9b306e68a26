package pool

import (
	"context"
	"sync/atomic"
)

// subscribeLoop keeps the wake-up subscription open until ctx ends. Each
// (re)subscription makes every queue look for due jobs, since messages sent
// while it was down are lost.
func (p *Pool) subscribeLoop(ctx context.Context, names []string) {
	onWake := func(name string, at int64) {
		if q := p.queues[name]; q != nil {
			q.wake(at)
		}
	}
	onCancel := func(name, id string) {
		if p.queues[name] != nil {
			p.cancelRun(name, id)
		}
	}
	onSubscribed := func() {
		for _, q := range p.queues {
			q.wake(0)
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
		p.log.Warn("wake-up subscription broke; safety polls continue", "err", err)
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

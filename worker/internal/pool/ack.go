package pool

import (
	"context"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// ackLoop writes batched acks whenever some are pending, until stop is
// closed, then writes what is left.
func (p *Pool) ackLoop(stop <-chan struct{}) {
	for {
		select {
		case <-p.ackSig:
			p.flushAcks()
		case <-stop:
			p.flushAcks()
			return
		}
	}
}

func (p *Pool) flushAcks() {
	p.mu.Lock()
	if len(p.acks) == 0 {
		p.mu.Unlock()
		return
	}
	pending := p.acks
	p.acks = make(map[string][]store.Token, len(pending))
	p.mu.Unlock()
	for queue, toks := range pending {
		for attempt := 1; ; attempt++ {
			ctx, cancel := context.WithTimeout(p.baseCtx, writeTimeout)
			_, err := p.st.Ack(ctx, queue, toks)
			cancel()
			if err == nil {
				break
			}
			if attempt == 3 {
				p.log.Error("ack jobs; they will run again when their leases expire",
					"queue", queue, "jobs", len(toks), "err", err)
				break
			}
			sleepCtx(p.baseCtx, errorBackoff(attempt)) // three tries at most
		}
	}
}

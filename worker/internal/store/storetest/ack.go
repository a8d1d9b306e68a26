package storetest

import (
	"context"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Ack is ack.lua.
func (f *Fake) Ack(_ context.Context, queue string, toks []store.Token) (int, error) {
	f.sleep("Ack")
	f.mu.Lock()
	defer f.unlock()
	if len(toks) == 0 {
		f.t.Errorf("fake: Ack(%s) without tokens", queue)
	}
	c := Call{Method: "Ack", Queue: queue, At: time.Now(), Toks: slices.Clone(toks)}
	if f.downLocked(&c, "ack "+queue) {
		return 0, c.Err
	}
	for _, tok := range toks {
		if f.heldLocked(queue, tok) != nil {
			delete(f.queues[queue], tok.ID)
			c.Got++
		}
	}
	f.record(c)
	return c.Got, nil
}

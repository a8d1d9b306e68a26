package storetest

import (
	"context"
	"fmt"
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
	if f.down {
		err := fmt.Errorf("ack %s: %w", queue, errDown)
		f.record(Call{Method: "Ack", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Err: err})
		return 0, err
	}
	done := 0
	for _, tok := range toks {
		if f.heldLocked(queue, tok) != nil {
			delete(f.queues[queue], tok.ID)
			done++
		}
	}
	f.record(Call{Method: "Ack", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Got: done})
	return done, nil
}

package storetest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Snooze is snooze.lua.
func (f *Fake) Snooze(_ context.Context, queue string, toks []store.Token, delay time.Duration) (int, error) {
	f.sleep("Snooze")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	if delay < 0 || len(toks) == 0 {
		f.t.Errorf("fake: Snooze(%s, %d tokens, delay=%v): the script rejects this", queue, len(toks), delay)
	}
	if f.down {
		err := fmt.Errorf("snooze %s: %w", queue, errDown)
		f.record(Call{Method: "Snooze", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Delay: delay, Err: err})
		return 0, err
	}
	prev, hadPrev := f.headLocked(queue)
	moved := 0
	for _, tok := range toks {
		j := f.heldLocked(queue, tok)
		if j == nil {
			continue
		}
		if j.Rec.Attempt > 0 {
			j.Rec.Attempt--
		}
		j.State, j.Score = store.SetDue, ms(now.Add(delay))
		moved++
	}
	if moved > 0 {
		f.publishLocked(queue, prev, hadPrev, ms(now.Add(delay)))
	}
	f.record(Call{Method: "Snooze", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Delay: delay, Got: moved})
	return moved, nil
}

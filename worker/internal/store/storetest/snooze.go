package storetest

import (
	"context"
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
	if delay.Milliseconds() < 0 || len(toks) == 0 {
		f.t.Errorf("fake: Snooze(%s, %d tokens, delay=%v): the script rejects this", queue, len(toks), delay)
	}
	c := Call{Method: "Snooze", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Delay: delay}
	if f.downLocked(&c, "snooze "+queue) {
		return 0, c.Err
	}
	prev, hadPrev := f.headLocked(queue)
	for _, tok := range toks {
		j := f.heldLocked(queue, tok)
		if j == nil {
			continue
		}
		if j.Rec.Attempt > 0 {
			j.Rec.Attempt--
		}
		j.leave(store.SetDue, after(now, delay))
		c.Got++
	}
	if c.Got > 0 {
		f.publishLocked(queue, prev, hadPrev, after(now, delay))
	}
	f.record(c)
	return c.Got, nil
}

// SnoozeLimited is Snooze: the fake holds no job keys (the store's keyed
// behaviour is proven on real Redis, in package store's tests).
func (f *Fake) SnoozeLimited(ctx context.Context, queue string, toks []store.Token, delay time.Duration) (int, error) {
	return f.Snooze(ctx, queue, toks, delay)
}

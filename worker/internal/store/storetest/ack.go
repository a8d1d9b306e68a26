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

// Complete is complete.lua: Ack for a queue that retains finished jobs.
// Each job held under its token is kept, in the completed set at the
// finish time (whole ms), with its result (nil for an empty one); its
// claim and its options (priority, unique key) are gone, its attempts are
// the ones it ran, the last one that succeeded. A repeated job counts once.
func (f *Fake) Complete(_ context.Context, queue string, done []store.Completion) (int, error) {
	f.sleep("Complete")
	f.mu.Lock()
	defer f.unlock()
	if len(done) == 0 {
		f.t.Errorf("fake: Complete(%s) without jobs", queue)
	}
	c := Call{Method: "Complete", Queue: queue, At: time.Now()}
	for _, d := range done {
		c.Toks = append(c.Toks, d.Token)
	}
	if f.downLocked(&c, "complete "+queue) {
		return 0, c.Err
	}
	now := ms(f.nowLocked())
	for _, d := range done {
		if j := f.heldLocked(queue, d.Token); j != nil {
			j.leave(store.SetCompleted, now)
			j.Rec.Worker, j.Rec.Progress = "", nil
			j.Rec.Priority, j.Rec.Unique = store.PriorityNormal, store.Unique{}
			j.Rec.Result, j.Rec.FinishedAt = nil, now
			if len(d.Result) > 0 {
				j.Rec.Result = slices.Clone(d.Result)
			}
			c.Got++
		}
	}
	f.record(c)
	return c.Got, nil
}

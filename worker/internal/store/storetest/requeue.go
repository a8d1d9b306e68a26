package storetest

import (
	"context"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Requeue is requeue.lua, called with MaxBatch ids at a time as
// store.Requeue calls it: dead (or cancelled: from) jobs go back to due
// now with their attempts reset and their last error kept; other ids are
// reported false.
func (f *Fake) Requeue(_ context.Context, queue string, from store.Set, ids []string) ([]bool, error) {
	if from == "" {
		from = store.SetDead
	}
	f.sleep("Requeue")
	f.mu.Lock()
	defer f.unlock()
	c := Call{Method: "Requeue", Queue: queue, At: time.Now(), N: len(ids)}
	if f.downLocked(&c, "requeue "+queue) {
		return nil, c.Err
	}
	moved := make([]bool, 0, len(ids))
	for batch := range slices.Chunk(ids, store.MaxBatch) {
		now := ms(f.nowLocked())
		prev, hadPrev := f.headLocked(queue)
		n := 0
		for _, id := range batch {
			j := f.queues[queue][id]
			if j == nil || j.State != from {
				moved = append(moved, false)
				continue
			}
			j.Rec.Attempt = 0
			j.State, j.Score = store.SetDue, now
			moved = append(moved, true)
			n++
		}
		if n > 0 {
			f.publishLocked(queue, prev, hadPrev, now)
		}
		c.Got += n
	}
	f.record(c)
	return moved, nil
}

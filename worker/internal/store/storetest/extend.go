package storetest

import (
	"context"
	"errors"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Extend is extend.lua for every queue of byQueue, in one round trip.
func (f *Fake) Extend(_ context.Context, byQueue map[string][]store.Renewal, lease time.Duration) (map[string][]store.Lost, error) {
	f.sleep("Extend")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	c := Call{Method: "Extend", At: time.Now(), Lease: lease, ByQueue: make(map[string][]store.Token, len(byQueue))}
	for queue, rs := range byQueue {
		if len(rs) == 0 {
			f.t.Errorf("fake: Extend with no tokens for queue %s", queue)
		}
		for _, r := range rs {
			c.ByQueue[queue] = append(c.ByQueue[queue], r.Token)
		}
		c.N += len(rs)
	}
	if f.downLocked(&c, "extend") {
		return map[string][]store.Lost{}, c.Err
	}
	lost := make(map[string][]store.Lost)
	var errs []error
	for queue, rs := range byQueue {
		if f.downQueues[queue] {
			errs = append(errs, &store.QueueError{Queue: queue, Op: "extend", Err: errDown})
			continue
		}
		for _, r := range rs {
			tok := r.Token
			if j := f.heldLocked(queue, tok); j != nil {
				j.Score = after(now, lease)
				if r.Progress != nil {
					// a report extend.lua drops is dropped, the lease renewed
					if p, ok := r.Progress.Normal(); ok {
						p.UpdatedAt = now.Truncate(time.Millisecond)
						j.Rec.Progress = &p
					}
				}
			} else {
				j := f.queues[queue][tok.ID]
				cancelled := j != nil && (j.State == store.SetCancelled || j.State == store.SetDead && j.Rec.LastError == store.CancelledError)
				lost[queue] = append(lost[queue], store.Lost{Token: tok, Cancelled: cancelled})
			}
		}
	}
	c.Err = errors.Join(errs...)
	f.record(c)
	return lost, c.Err
}

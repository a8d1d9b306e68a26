package storetest

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Extend is extend.lua for every queue of byQueue, in one round trip.
func (f *Fake) Extend(_ context.Context, byQueue map[string][]store.Token, lease time.Duration) (map[string][]store.Lost, error) {
	f.sleep("Extend")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	c := Call{Method: "Extend", At: time.Now(), Lease: lease, ByQueue: make(map[string][]store.Token, len(byQueue))}
	for queue, toks := range byQueue {
		if len(toks) == 0 {
			f.t.Errorf("fake: Extend with no tokens for queue %s", queue)
		}
		c.ByQueue[queue] = slices.Clone(toks)
		c.N += len(toks)
	}
	if f.downLocked(&c, "extend") {
		return map[string][]store.Lost{}, c.Err
	}
	lost := make(map[string][]store.Lost)
	var errs []error
	for queue, toks := range byQueue {
		if f.downQueues[queue] {
			errs = append(errs, &store.QueueError{Queue: queue, Op: "extend", Err: errDown})
			continue
		}
		for _, tok := range toks {
			if j := f.heldLocked(queue, tok); j != nil {
				j.Score = after(now, lease)
			} else {
				j := f.queues[queue][tok.ID]
				cancelled := j != nil && j.State == store.SetDead && j.Rec.LastError == store.CancelledError
				lost[queue] = append(lost[queue], store.Lost{Token: tok, Cancelled: cancelled})
			}
		}
	}
	c.Err = errors.Join(errs...)
	f.record(c)
	return lost, c.Err
}

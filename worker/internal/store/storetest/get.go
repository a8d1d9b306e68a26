package storetest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Get is get.lua as store.Get reports it: the claim token only while the
// job is active, and its attempts spent with the running one counted.
func (f *Fake) Get(_ context.Context, queue, id string) (store.Snapshot, error) {
	f.sleep("Get")
	f.mu.Lock()
	defer f.unlock()
	c := Call{Method: "Get", Queue: queue, At: time.Now()}
	if f.downLocked(&c, fmt.Sprintf("get %s job %q", queue, id)) {
		return store.Snapshot{}, c.Err
	}
	f.record(c)
	j := f.queues[queue][id]
	if j == nil {
		return store.Snapshot{}, store.ErrNotFound
	}
	snap := store.Snapshot{Record: j.Rec, Set: j.State, Score: j.Score, Now: ms(f.nowLocked())}
	snap.Record.Payload = slices.Clone(j.Rec.Payload)
	if j.Bad {
		// store.Get returns what DecodeRecord left: the id, and the
		// running attempt of an active job.
		snap.Record = store.Record{ID: id, Claim: snap.Record.Claim}
		if j.State == store.SetActive {
			snap.Record.Attempt = 1
		}
		return snap, badRecord(id)
	}
	return snap, nil
}

// badRecord is the error store's decoder gives for a record that the
// scripts accept but Go does not (a Job added with AddBad).
func badRecord(id string) error {
	return fmt.Errorf("job %q: %w: header field 3", id, store.ErrCorrupt)
}

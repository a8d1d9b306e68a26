package storetest

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Cancel is cancel.lua: a due job goes to the cancelled set as it is; a
// running one goes there with the last error store.CancelledError, its
// claim gone, and its worker is told on the wake channel; a dead,
// completed or cancelled one is left as it is.
func (f *Fake) Cancel(_ context.Context, queue, id string) (store.CancelResult, error) {
	f.sleep("Cancel")
	f.mu.Lock()
	defer f.unlock()
	c := Call{Method: "Cancel", Queue: queue, At: time.Now()}
	if f.downLocked(&c, fmt.Sprintf("cancel %s job %q", queue, id)) {
		return store.CancelNotFound, c.Err
	}
	f.record(c)
	j := f.queues[queue][id]
	switch {
	case j == nil:
		return store.CancelNotFound, nil
	case j.State == store.SetActive:
		run := store.Token{ID: id, Claim: j.Rec.Claim}
		j.Rec.LastError = store.CancelledError
		j.leave(store.SetCancelled, ms(f.nowLocked()))
		if f.subscribed[queue] && !f.loseCancels {
			f.outbox = append(f.outbox, wakeMsg{queue: queue, cancel: run})
		}
		return store.CancelRunning, nil
	case j.State == store.SetDead:
		return store.CancelDead, nil
	case j.State == store.SetCompleted:
		return store.CancelCompleted, nil
	case j.State == store.SetCancelled:
		return store.CancelAlready, nil
	}
	j.leave(store.SetCancelled, ms(f.nowLocked()))
	return store.Cancelled, nil
}

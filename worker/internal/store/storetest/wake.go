package storetest

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Subscribe delivers wake-ups, and the cancels of running jobs, of queues
// until ctx ends.
func (f *Fake) Subscribe(ctx context.Context, queues []string, onWake func(queue string, runAtMs int64), onCancel func(queue string, tok store.Token), onSubscribed func()) error {
	f.mu.Lock()
	if f.onWake != nil {
		f.t.Errorf("fake: two subscriptions at once")
	}
	f.onWake, f.onCancel = onWake, onCancel
	for _, q := range queues {
		f.subscribed[q] = true
	}
	f.record(Call{Method: "Subscribe", At: time.Now(), N: len(queues)})
	brk := f.subBreak
	f.mu.Unlock()
	if onSubscribed != nil {
		onSubscribed()
	}
	var broke <-chan time.Time
	if brk > 0 {
		broke = time.After(brk)
	}
	var err error
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case <-broke:
		err = fmt.Errorf("subscribe to wake-ups: %w", errDown)
	}
	f.mu.Lock()
	f.onWake, f.onCancel = nil, nil
	clear(f.subscribed)
	f.mu.Unlock()
	return err
}

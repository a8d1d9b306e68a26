package queue

import (
	"context"
	"errors"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Route returns the layout to route queue's new jobs by: the newest this
// Layer learned (from a read, a write or a refusal), read from partition
// 0 the first time. Send its Version with the enqueue (store.Target): a
// partition that knows a newer layout refuses, and Refused says what next.
func (y *Layer) Route(ctx context.Context, queue string) (store.Layout, error) {
	if v, ok := y.routes.Load(queue); ok {
		return *v.(*store.Layout), nil
	}
	return y.Layout(ctx, queue)
}

// Refused decides what a producer does after an enqueue routed by l was
// refused for its routing with err (store.ErrRetired or a
// *store.StaleLayoutError): route again by next, a newer layout, or, when
// nothing newer is known (a layout change is under way, or stopped half
// way), send the jobs to partition 0 unchecked (fallback), which every
// layout serves. Any other err is returned as it is.
func (y *Layer) Refused(ctx context.Context, queue string, l store.Layout, err error) (next store.Layout, fallback bool, _ error) {
	var stale *store.StaleLayoutError
	switch {
	case errors.As(err, &stale) && stale.Known && stale.Layout.Version > l.Version:
		y.learn(queue, stale.Layout)
		return stale.Layout, false, nil
	case errors.As(err, &stale), errors.Is(err, store.ErrRetired):
		now, err := y.Layout(ctx, queue)
		if err != nil {
			return store.Layout{}, false, err
		}
		if now.Version > l.Version {
			return now, false, nil
		}
		return l, true, nil
	}
	return store.Layout{}, false, err
}

// Forget drops what the Layer learned of queue (its record was deleted).
func (y *Layer) Forget(queue string) { y.routes.Delete(queue) }

// learn keeps l as queue's route when it is newer than the one held (or
// none is held).
func (y *Layer) learn(queue string, l store.Layout) {
	for {
		v, loaded := y.routes.LoadOrStore(queue, &l)
		if !loaded {
			return
		}
		held := v.(*store.Layout)
		if l.Version <= held.Version || y.routes.CompareAndSwap(queue, held, &l) {
			return
		}
	}
}

package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Layer reads and changes the records of queues, and remembers the layouts
// producers route by. It is safe for concurrent use; one per Client or
// Daemon.
type Layer struct {
	st     *store.Store
	routes sync.Map // queue name → *store.Layout: the newest this Layer learned
}

// New returns a Layer on st.
func New(st *store.Store) *Layer { return &Layer{st: st} }

// Read reads queue's record from partition 0, now, and learns its layout.
func (y *Layer) Read(ctx context.Context, queue string) (store.QueueRecord, error) {
	rec, err := y.st.ReadQueue(ctx, queue)
	if err != nil {
		return store.QueueRecord{}, err
	}
	// Partition 0 is the authority: its layout replaces the one held, even
	// an older one (the record was deleted with the queue, or lost).
	l := rec.Layout
	y.routes.Store(queue, &l)
	return rec, nil
}

// Layout reads queue's layout now (Read).
func (y *Layer) Layout(ctx context.Context, queue string) (store.Layout, error) {
	rec, err := y.Read(ctx, queue)
	return rec.Layout, err
}

// Partitions returns the partitions of queue that may hold jobs, by its
// layout read now: those producers route to, partition 0 first, then those
// of earlier layouts still draining.
func (y *Layer) Partitions(ctx context.Context, queue string) ([]string, error) {
	l, err := y.Layout(ctx, queue)
	if err != nil {
		return nil, err
	}
	return l.All(queue), nil
}

// SetPaused pauses (on) or resumes queue: partition 0's flag first, then
// every other partition's. When it returns nil, every partition of the
// layout is so; a layout change running meanwhile carries the flag to the
// partitions it adds (see the package doc). It reports whether partition
// 0's flag changed.
func (y *Layer) SetPaused(ctx context.Context, queue string, on bool) (bool, error) {
	rec, changed, err := y.st.SetPaused(ctx, queue, on)
	if err != nil {
		return false, err
	}
	return changed, y.spread(ctx, queue, rec)
}

// SetIDRetention sets how long a caller's id of queue stays refused after
// its job finished, in every partition (0: not at all).
func (y *Layer) SetIDRetention(ctx context.Context, queue string, d time.Duration) error {
	rec, _, err := y.st.SetIDRetention(ctx, queue, d)
	if err != nil {
		return err
	}
	return y.spread(ctx, queue, rec)
}

// spread copies rec to every partition i ≥ 1 of its layout, those it
// drains too. Partitions that hold it already write nothing.
func (y *Layer) spread(ctx context.Context, queue string, rec store.QueueRecord) error {
	y.learn(queue, rec.Layout)
	all := rec.Layout.All(queue)
	if len(all) <= 1 {
		return nil
	}
	return y.st.CopyQueue(ctx, rec, copies(queue, rec.Layout, all[1:]))
}

// copies describes the copies of a record of layout l to parts.
func copies(queue string, l store.Layout, parts []string) []store.PartitionCopy {
	names := l.Names(queue)
	out := make([]store.PartitionCopy, len(parts))
	for i, p := range parts {
		out[i] = store.PartitionCopy{Partition: p, Serves: slices.Contains(names, p), Share: l.ShareOf(queue, p)}
	}
	return out
}

// maxConflicts bounds how often Serve starts again because the record
// changed under it.
const maxConflicts = 20

// Serve makes queue's layout n partitions (a daemon's QueueOptions.
// Partitions), in the steps of the package doc, and returns the
// partitions the daemon serves: the layout's, then those of earlier
// layouts that still hold jobs, served until they are empty. A queue never
// split that stays at one partition costs one read and writes nothing.
func (y *Layer) Serve(ctx context.Context, queue string, n int) ([]string, error) {
	for range maxConflicts {
		rec, err := y.Read(ctx, queue)
		if err != nil {
			return nil, err
		}
		old := rec.Layout
		names := store.PartitionNames(queue, n)
		if n <= 1 && old.Partitions <= 1 && len(old.Prev) == 0 {
			return names, nil
		}
		was := old.All(queue)
		var retired []string
		for _, p := range was {
			if !slices.Contains(names, p) {
				retired = append(retired, p)
			}
		}
		if err := y.st.Retire(ctx, retired, rec.Rev+1); err != nil {
			return nil, err
		}
		want, serve, err := y.draining(ctx, queue, old, n, retired)
		if err != nil {
			return nil, err
		}
		var added []string
		for _, p := range want.All(queue)[1:] {
			if !slices.Contains(was, p) {
				added = append(added, p)
			}
		}
		// Shares of a rate limit shrink before the layout is published and
		// grow after: until the copies of step 6, each partition of the
		// new layout claims the smaller of its two shares, and an added
		// one nothing. (Also when the layout stays: it replaces a cap an
		// earlier change that did not publish may have left.)
		if err := y.st.CapShares(ctx, copies(queue, want, want.All(queue)[1:]), added); err != nil {
			return nil, err
		}
		if old.Same(want) && old.Version > 0 {
			return serve, y.spread(ctx, queue, rec)
		}
		// (A layout of a version before the record, with no version, is
		// published again: partition 0 gets its share and a version.)
		if rec.Rev > 0 {
			// The record as it is, under the old layout: no producer routes
			// to these partitions before step 5.
			pre := copies(queue, want, added)
			if err := y.st.CopyQueue(ctx, rec, pre); err != nil {
				return nil, err
			}
		}
		// Keys' own caps and weights, which every partition holds, go to
		// the added ones before any producer routes a key there.
		if err := y.st.CopyKeyLimits(ctx, queue, added); err != nil {
			return nil, err
		}
		pub, ok, err := y.st.PublishLayout(ctx, queue, rec.Rev, want, want.ShareOf(queue, queue))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // the record changed since step 1: again, with it
		}
		return serve, y.spread(ctx, queue, pub)
	}
	return nil, fmt.Errorf("change the partitions of %s: %w", queue, errBusy)
}

var errBusy = errors.New("its record kept changing while the layout was written; try again")

// draining returns the layout of n partitions that keeps, as Prev, the
// earlier numbers whose retired partitions still hold jobs, and the
// partitions to serve: the layout's, then those retired ones.
func (y *Layer) draining(ctx context.Context, queue string, old store.Layout, n int, retired []string) (store.Layout, []string, error) {
	holding, err := y.st.HoldJobs(ctx, retired)
	if err != nil {
		return store.Layout{}, nil, err
	}
	serve := slices.Clone(store.PartitionNames(queue, n))
	var prev []int
	for i, p := range retired {
		if !holding[i] {
			continue
		}
		serve = append(serve, p)
		for _, m := range append([]int{old.Partitions}, old.Prev...) {
			if m != n && !slices.Contains(prev, m) && slices.Contains(store.PartitionNames(queue, m), p) {
				prev = append(prev, m)
			}
		}
	}
	return store.Layout{Partitions: n, Prev: prev}, serve, nil
}

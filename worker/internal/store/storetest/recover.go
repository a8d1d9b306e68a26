package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Recover is recover.lua.
// The pool never calls it (recovery is the carrier's); tests call it to
// play the queue's leader.
func (f *Fake) Recover(_ context.Context, queue, _ string, limit, defaultMax int) (store.Recovered, error) {
	f.sleep("Recover")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	if limit < 1 || defaultMax < 1 {
		f.t.Errorf("fake: Recover(%s, limit=%d, defaultMax=%d): the script rejects this", queue, limit, defaultMax)
	}
	c := Call{Method: "Recover", Queue: queue, At: time.Now(), N: limit, Max: defaultMax}
	if f.downLocked(&c, "recover "+queue) {
		return store.Recovered{}, c.Err
	}
	nowMs := ms(now)
	var expired []*Job
	for _, j := range f.queues[queue] {
		if j.State == store.SetActive && j.Score.Before(nowMs) {
			expired = append(expired, j)
		}
	}
	slices.SortFunc(expired, func(a, b *Job) int {
		return cmp.Or(a.Score.Compare(b.Score), cmp.Compare(a.Rec.ID, b.Rec.ID))
	})
	expired = expired[:min(len(expired), limit, store.MaxBatch)] // store.Recover sends at most MaxBatch
	prev, hadPrev := f.headLocked(queue)
	var r store.Recovered
	for _, j := range expired {
		maxAttempts := cmp.Or(j.Rec.MaxAttempts, defaultMax)
		if j.Rec.Attempt >= maxAttempts {
			j.Rec.LastError = fmt.Sprintf("lease expired: the worker running attempt %d stopped responding; no attempts left", j.Rec.Attempt)
			j.leave(store.SetDead, nowMs)
			r.Dead++
		} else {
			j.Rec.LastError = fmt.Sprintf("lease expired: the worker running attempt %d stopped responding", j.Rec.Attempt)
			j.leave(store.SetDue, nowMs)
			r.Due++
		}
	}
	if r.Due > 0 {
		f.publishLocked(queue, prev, hadPrev, nowMs)
	}
	c.Got = r.Due + r.Dead
	f.record(c)
	return r, nil
}

// Lead returns a leader field for Recover, which the fake does not check:
// every caller leads.
func (f *Fake) Lead(*testing.T, string) string { return "fake-leader" }

package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// ClaimLimited is claim.lua, recorded as "Claim".
func (f *Fake) ClaimLimited(_ context.Context, queue string, n int, lease time.Duration, limit store.Rate) (store.Claimed, error) {
	f.sleep("Claim")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	c := Call{Method: "Claim", Queue: queue, At: time.Now(), N: n, Lease: lease, Rate: limit}
	n = min(n, store.MaxBatch) // as store.ClaimLimited sends it
	if n < 1 || lease < time.Millisecond {
		f.t.Errorf("fake: Claim(%s, n=%d, lease=%v): the script rejects this", queue, n, lease)
	}
	if limit != (store.Rate{}) && (limit.N < 1 || limit.N > store.MaxRateN || limit.Per < time.Millisecond || limit.Per > store.MaxRatePer) {
		f.t.Errorf("fake: Claim(%s, limit=%+v): the script rejects this", queue, limit)
	}
	per := wholeMs(limit.Per) // as store.ClaimLimited sends it
	if f.failClaims > 0 || f.down {
		f.failClaims = max(f.failClaims-1, 0)
		c.Err = fmt.Errorf("claim %s: %w", queue, errDown)
		f.record(c)
		return store.Claimed{}, c.Err
	}
	if f.paused[queue] {
		// claim.lua checks the flag before any write: nothing moves, and
		// the rate window is left alone.
		c.Paused = true
		f.record(c)
		return store.Claimed{Now: now, Paused: true}, nil
	}
	nowMs := ms(now)
	var due []*Job
	for _, j := range f.queues[queue] {
		if j.State == store.SetDue && !j.Score.After(nowMs) {
			due = append(due, j)
		}
	}
	// ZRANGEBYSCORE order: score, then member.
	slices.SortFunc(due, func(a, b *Job) int {
		return cmp.Or(a.Score.Compare(b.Score), cmp.Compare(a.Rec.ID, b.Rec.ID))
	})
	// The rate window: claims at or before now - Per have left it.
	capacity := store.MaxBatch
	if limit.N > 0 {
		window := f.rate[queue]
		for len(window) > 0 && !window[0].At.After(now.Add(-per)) {
			window = window[1:]
		}
		f.rate[queue] = window
		capacity = limit.N
		for _, e := range window {
			capacity -= e.N
		}
	}
	due = due[:max(min(len(due), n, capacity), 0)]
	out := store.Claimed{Now: now}
	var tok int64
	if len(due) > 0 {
		tok = f.nextTokenLocked(queue) // one token for every job of the call
	}
	for _, j := range due {
		runAt := j.Score
		j.Rec.Claim = tok
		j.Rec.Progress = nil
		j.Rec.Attempt++
		j.State, j.Score = store.SetActive, after(now, lease)
		if j.Bad {
			out.Bad = append(out.Bad, store.BadRecord{
				Token: j.Rec.Token(),
				Err:   badRecord(j.Rec.ID),
			})
			continue
		}
		r := j.Rec
		r.RunAt = runAt
		r.Payload = slices.Clone(r.Payload)
		out.Jobs = append(out.Jobs, r)
	}
	head, ok := f.headLocked(queue)
	if ok {
		out.Next = head
	}
	if limit.N > 0 && len(due) > 0 {
		// Entries never go back in time, even when the clock does.
		at := now
		if w := f.rate[queue]; len(w) > 0 {
			at = maxTime(at, w[len(w)-1].At)
		}
		f.rate[queue] = append(f.rate[queue], rateEntry{At: at, N: len(due)})
	}
	if limit.N > 0 && capacity-len(due) <= 0 && ok {
		// Capacity frees when the oldest claim leaves the window; the script
		// rounds that up to whole ms.
		free := f.rate[queue][0].At.Add(per)
		if msFree := ms(free); msFree.Before(free) {
			free = msFree.Add(time.Millisecond)
		}
		if !head.After(free) {
			out.Next, out.Limited = free, true
		}
	}
	c.Got, c.Limited = len(due), out.Limited
	f.record(c)
	return out, nil
}

// ClaimWith is ClaimLimited: the Fake does not model priority levels, so
// the weights are not used (the store's tests cover them on real Redis).
func (f *Fake) ClaimWith(ctx context.Context, queue string, n int, lease time.Duration, o store.ClaimOptions) (store.Claimed, error) {
	return f.ClaimLimited(ctx, queue, n, lease, o.Rate)
}

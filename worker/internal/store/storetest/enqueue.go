package storetest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// maxField is the largest max attempts or timeout (ms) enqueue.lua accepts.
const maxField = 999_999_999_999

// Enqueue is enqueue.lua, called with MaxBatch jobs at a time as
// store.Enqueue calls it: an id that exists, or that came earlier in the
// same call, is reported false and left untouched.
func (f *Fake) Enqueue(_ context.Context, queue string, jobs []store.NewJob) ([]bool, error) {
	f.sleep("Enqueue")
	f.mu.Lock()
	defer f.unlock()
	c := Call{Method: "Enqueue", Queue: queue, At: time.Now(), N: len(jobs)}
	if f.downLocked(&c, "enqueue "+queue) {
		return nil, c.Err
	}
	for i, j := range jobs {
		if j.ID == "" || (!j.At.IsZero() && j.At.UnixMilli() < 0) || j.Delay.Milliseconds() < 0 ||
			j.MaxAttempts < 0 || j.MaxAttempts > maxField || j.Timeout.Milliseconds() < 0 || j.Timeout.Milliseconds() > maxField {
			f.t.Errorf("fake: Enqueue(%s) job %d %+v: the script rejects this", queue, i+1, j)
			c.Err = fmt.Errorf("enqueue %s: job %d refused", queue, i+1)
			f.record(c)
			return nil, c.Err
		}
	}
	added := make([]bool, 0, len(jobs))
	for batch := range slices.Chunk(jobs, store.MaxBatch) {
		added = append(added, f.enqueueLocked(queue, batch)...)
	}
	for _, ok := range added {
		if ok {
			c.Got++
		}
	}
	f.record(c)
	return added, nil
}

// enqueueLocked is one call of enqueue.lua.
func (f *Fake) enqueueLocked(queue string, batch []store.NewJob) []bool {
	now := ms(f.nowLocked())
	prev, hadPrev := f.headLocked(queue)
	var earliest time.Time
	q := f.queueLocked(queue)
	added := make([]bool, len(batch))
	for i, nj := range batch {
		if _, ok := q[nj.ID]; ok {
			continue
		}
		score := now.Add(wholeMs(nj.Delay))
		if !nj.At.IsZero() {
			score = ms(nj.At)
		}
		q[nj.ID] = &Job{
			Rec: store.Record{
				ID:          nj.ID,
				MaxAttempts: nj.MaxAttempts,
				Timeout:     wholeMs(nj.Timeout),
				EnqueuedAt:  now,
				Payload:     slices.Clone(nj.Payload),
			},
			State: store.SetDue,
			Score: score,
		}
		if earliest.IsZero() || score.Before(earliest) {
			earliest = score
		}
		added[i] = true
	}
	if !earliest.IsZero() {
		f.publishLocked(queue, prev, hadPrev, earliest)
	}
	return added
}

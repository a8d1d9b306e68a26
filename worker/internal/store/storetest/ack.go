package storetest

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Ack is ack.lua.
func (f *Fake) Ack(_ context.Context, queue string, toks []store.Token) (int, error) {
	return f.settle("Ack", queue, toks, func(j *Job, _ int, _ time.Time) {
		delete(f.queues[queue], j.Rec.ID)
	})
}

// Complete is complete.lua: Ack for a queue that retains finished jobs.
// Each job held under its token is kept, in the completed set at the
// finish time (whole ms), with its result (nil for an empty one); its
// claim and its options (priority, unique key) are gone, its attempts are
// the ones it ran, the last one that succeeded. A repeated job counts once.
func (f *Fake) Complete(_ context.Context, queue string, done []store.Completion) (int, error) {
	toks := make([]store.Token, len(done))
	for i, d := range done {
		toks[i] = d.Token
	}
	return f.settle("Complete", queue, toks, func(j *Job, i int, now time.Time) {
		j.leave(store.SetCompleted, ms(now))
		j.Rec.Priority, j.Rec.Unique = store.PriorityNormal, store.Unique{}
		j.Rec.Result = nil
		if len(done[i].Result) > 0 {
			j.Rec.Result = slices.Clone(done[i].Result)
		}
	})
}

// settle is what Ack and Complete share: one call of method on queue,
// recorded (failed while Redis is down), that ends the running attempt of
// each job held under toks[i] with each(job, i, the Redis clock) and
// counts it. A repeated job counts once: its first token ends the attempt.
func (f *Fake) settle(method, queue string, toks []store.Token, each func(j *Job, i int, now time.Time)) (int, error) {
	f.sleep(method)
	f.mu.Lock()
	defer f.unlock()
	if len(toks) == 0 {
		f.t.Errorf("fake: %s(%s) without jobs", method, queue)
	}
	c := Call{Method: method, Queue: queue, At: time.Now(), Toks: slices.Clone(toks)}
	if f.downLocked(&c, strings.ToLower(method)+" "+queue) {
		return 0, c.Err
	}
	now := f.nowLocked()
	for i, tok := range toks {
		if j := f.heldLocked(queue, tok); j != nil {
			each(j, i, now)
			c.Got++
		}
	}
	f.record(c)
	return c.Got, nil
}

package bench

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// shareFigures are a fair share phase's: the worst deviation of a key's
// share of the starts from its weight's share, in percent of the latter,
// over the window of starts counted.
type shareFigures struct {
	devPct float64
	keys   int
	window int64   // the starts counted
	perS   float64 // their rate
	// got and want are the starts in the window of the key of the worst
	// deviation, and its weight's share of them.
	got, want float64
}

// figures formats f's details, each key after the phase's prefix p.
func (f shareFigures) figures(p string) string {
	return fmt.Sprintf(" %s_keys=%d %s_window=%d %s_starts_per_s=%.0f %s_worst_got=%.0f %s_worst_want=%.1f",
		p, f.keys, p, f.window, p, f.perS, p, f.got, p, f.want)
}

// keysShare runs a fair share phase on queue q: --share-keys keys, key i of
// weight weights[i % len(weights)] (set with SetKeyLimits; nil: every
// key the default weight, 1) and --share-jobs jobs per unit of weight,
// enqueued in turns so that every key has work due throughout. No cap
// binds. The fleet's starts are counted per key from the first tenth of
// the jobs to six tenths, while every key still has a backlog as long as
// the keys share the starts by their weights.
func (b *bench) keysShare(ctx context.Context, q string, weights []int) (shareFigures, error) {
	o := b.opts
	f := shareFigures{keys: o.keys.shareKeys}
	weight := func(i int) int {
		if len(weights) == 0 {
			return 1
		}
		return weights[i%len(weights)]
	}
	producer, op, err := b.clients()
	if err != nil {
		return f, err
	}
	names := keyNames("k", f.keys)
	counts := make(map[string]*atomic.Int64, f.keys)
	var order []int // the key of each job, in the order of the enqueue
	sum := 0
	for i, name := range names {
		counts[name] = new(atomic.Int64)
		sum += weight(i)
		if weights != nil {
			if err := op.SetKeyLimits(ctx, q, name, admin.KeyLimits{Concurrency: -1, Weight: weight(i)}); err != nil {
				return f, err
			}
		}
	}
	for round := 0; ; round++ {
		added := false
		for i := range names {
			if round < weight(i)*o.keys.shareJobs {
				order = append(order, i)
				added = true
			}
		}
		if !added {
			break
		}
	}
	payload := b.payload()
	if err := enqueueEach(ctx, producer, len(order), func(i int) worker.JobSpec {
		return worker.JobSpec{Queue: q, Key: names[order[i]], Payload: payload}
	}); err != nil {
		return f, fmt.Errorf("enqueue: %w", err)
	}

	lo := int64(len(order) / 10)
	hi := max(int64(len(order)*6/10), lo+1)
	var started, firstAt, lastAt atomic.Int64
	done := make(chan struct{})
	stop, err := b.startFleet(ctx, q, b.keyOptions(0), worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		c := started.Add(1)
		switch {
		case c <= lo || c > hi:
			return nil
		case c == lo+1:
			firstAt.Store(time.Now().UnixNano())
		}
		counts[j.Key].Add(1)
		if c == hi {
			lastAt.Store(time.Now().UnixNano())
			close(done)
		}
		return nil
	}))
	if err != nil {
		return f, err
	}
	defer func() { _ = stop() }()
	select {
	case <-done:
	case <-ctx.Done():
		return f, fmt.Errorf("%w: %d of the first %d jobs started", ctx.Err(), started.Load(), hi)
	}
	if err := stop(); err != nil {
		return f, err
	}
	f.window = hi - lo
	f.perS = float64(f.window) / time.Duration(lastAt.Load()-firstAt.Load()).Seconds()
	for i, name := range names {
		want := float64(f.window) * float64(weight(i)) / float64(sum)
		got := float64(counts[name].Load())
		if dev := math.Abs(got/want-1) * 100; dev >= f.devPct {
			f.devPct, f.got, f.want = dev, got, want
		}
	}
	return f, nil
}

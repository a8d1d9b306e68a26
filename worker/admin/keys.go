package admin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// KeyLimits are a job key's own limits (worker.JobSpec.Key), set at run
// time with SetKeyLimits; they replace the queue's for that key.
type KeyLimits struct {
	// Concurrency is how many of the key's jobs run at once, across every
	// process and partition: -1 = the queue's QueueOptions.KeyConcurrency,
	// 0 = no cap, else 1 to worker.MaxKeyConcurrency.
	Concurrency int
	// Weight is the key's share of the starts among the keys with work due,
	// against the others' (default 1): a key of weight 3 starts three jobs
	// for every one of a key of weight 1 while both have work. 0 = the
	// default; else 1 to MaxKeyWeight.
	Weight int
	// RateLimit caps the key's starts per window, across every process:
	// nil = the queue's QueueOptions.KeyRateLimit, a zero RateLimit = none.
	RateLimit *worker.RateLimit
}

// MaxKeyWeight is the largest KeyLimits.Weight.
const MaxKeyWeight = store.MaxKeyWeight

// DefaultKeyLimits are the limits of a key that has none of its own.
var DefaultKeyLimits = KeyLimits{Concurrency: -1}

// KeyStats is what a queue holds of one job key.
type KeyStats struct {
	Key string
	// Waiting counts the key's jobs that wait, due now or later, Ready
	// those of them due now; Running those that run (the slots the key
	// holds).
	Waiting, Ready, Running int64
	// Limits are the key's own limits (DefaultKeyLimits when it has none).
	Limits KeyLimits
	// AtCap reports the key runs at its cap with jobs waiting: none of its
	// jobs starts until one of those running ends.
	AtCap bool
	// LimitedUntil is when the key's back-pressure ends: a handler said its
	// downstream takes no more work until then (worker.KeyLimited), and
	// none of its jobs starts before it. Zero when it has none.
	LimitedUntil time.Time
}

// KeyList is one queue's keys with the most waiting jobs.
type KeyList struct {
	Keys []KeyStats // most waiting first
	// Total counts the keys that have waiting jobs.
	Total int64
}

// SetKeyLimits sets key's own limits in queue, in every partition, at
// once: the next claim applies them, and a key held at its old cap starts
// jobs at once when the new one is higher. DefaultKeyLimits removes them.
// The limits stay until changed, across restarts.
func (c *Client) SetKeyLimits(ctx context.Context, queue, key string, l KeyLimits) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	if err := worker.ValidateKey(key); err != nil {
		return err
	}
	switch {
	case l.Concurrency < -1 || l.Concurrency > worker.MaxKeyConcurrency:
		return &worker.ValidationError{Field: "Concurrency", Reason: fmt.Sprintf("must be -1 (the queue's), 0 (none) or 1 to %d (got %d)", worker.MaxKeyConcurrency, l.Concurrency)}
	case l.Weight < 0 || l.Weight > MaxKeyWeight:
		return &worker.ValidationError{Field: "Weight", Reason: fmt.Sprintf("must be 0 (the default, 1) or 1 to %d (got %d)", MaxKeyWeight, l.Weight)}
	}
	var rate *store.Rate
	if l.RateLimit != nil {
		if err := l.RateLimit.Validate(); err != nil {
			return err
		}
		rate = &store.Rate{N: l.RateLimit.N, Per: l.RateLimit.Per}
	}
	parts, err := c.core.Layer.Partitions(ctx, queue)
	if err != nil {
		return err
	}
	return c.core.St.SetKeyLimits(ctx, parts, key, store.KeyLimits{Cap: l.Concurrency, Weight: l.Weight, Rate: rate})
}

// Keys returns up to n (1 to 1,000) of queue's keys with the most waiting
// jobs, across its partitions, with their running jobs and limits.
func (c *Client) Keys(ctx context.Context, queue string, n int) (KeyList, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return KeyList{}, err
	}
	if n < 1 || n > 1000 {
		return KeyList{}, &worker.ValidationError{Field: "n", Reason: fmt.Sprintf("must be 1 to 1000 (got %d)", n)}
	}
	parts, err := c.core.Layer.Partitions(ctx, queue)
	if err != nil {
		return KeyList{}, err
	}
	top, total, err := c.core.St.TopKeys(ctx, parts, n)
	if err != nil {
		return KeyList{}, err
	}
	out := KeyList{Total: total}
	for _, k := range top {
		out.Keys = append(out.Keys, keyStats(k))
	}
	// A key lives in one partition (but while a layout change drains): merge.
	out.Keys = mergeKeys(out.Keys)
	slices.SortFunc(out.Keys, func(a, b KeyStats) int { return cmp.Or(cmp.Compare(b.Waiting, a.Waiting), cmp.Compare(a.Key, b.Key)) })
	if len(out.Keys) > n {
		out.Keys = out.Keys[:n]
	}
	return out, nil
}

// Key returns what queue holds of key, across its partitions: zero counts
// for a key with no job.
func (c *Client) Key(ctx context.Context, queue, key string) (KeyStats, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return KeyStats{}, err
	}
	if err := worker.ValidateKey(key); err != nil {
		return KeyStats{}, err
	}
	parts, err := c.core.Layer.Partitions(ctx, queue)
	if err != nil {
		return KeyStats{}, err
	}
	refs := make([]store.KeyRef, len(parts))
	for i, p := range parts {
		refs[i] = store.KeyRef{Partition: p, Key: key}
	}
	infos, err := c.core.St.KeyInfos(ctx, refs)
	if err != nil {
		return KeyStats{}, err
	}
	all := make([]KeyStats, len(infos))
	for i, k := range infos {
		all[i] = keyStats(k)
	}
	return mergeKeys(all)[0], nil
}

func keyStats(k store.KeyInfo) KeyStats {
	s := KeyStats{Key: k.Key, Waiting: k.Waiting, Ready: k.Ready, Running: k.Running,
		Limits: KeyLimits{Concurrency: k.Limits.Cap, Weight: k.Limits.Weight}, AtCap: k.Parked}
	if r := k.Limits.Rate; r != nil {
		s.Limits.RateLimit = &worker.RateLimit{N: r.N, Per: r.Per}
	}
	if k.LimitedUntil > 0 {
		s.LimitedUntil = time.UnixMilli(k.LimitedUntil)
	}
	return s
}

// mergeKeys sums the entries of one key (from several partitions) into one,
// keeping the first's limits.
func mergeKeys(ks []KeyStats) []KeyStats {
	var out []KeyStats
	at := map[string]int{}
	for _, k := range ks {
		if i, ok := at[k.Key]; ok {
			out[i].Waiting += k.Waiting
			out[i].Ready += k.Ready
			out[i].Running += k.Running
			out[i].AtCap = out[i].AtCap || k.AtCap
			if k.LimitedUntil.After(out[i].LimitedUntil) {
				out[i].LimitedUntil = k.LimitedUntil
			}
			continue
		}
		at[k.Key] = len(out)
		out = append(out, k)
	}
	return out
}

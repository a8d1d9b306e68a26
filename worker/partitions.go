package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// MaxPartitions bounds QueueOptions.Partitions.
const MaxPartitions = store.MaxPartitions

// PartitionOf returns the partition, of partitions, that holds a job whose
// partition key is key: its UniqueKey when it has one, else its ID. It is
// FNV-1a (64 bits) of key modulo partitions, so every producer and tool
// agrees on it.
func PartitionOf(key string, partitions int) int { return store.PartitionOf(key, partitions) }

// PartitionKeys returns the Redis keys of partition i (0-based) of queue
// split into partitions, in QueueKeys's order; they share one hash slot.
// Partition 0's are QueueKeys(prefix, queue): a queue of one partition is
// laid out as before partitions existed. Partition i ≥ 1 has the hash tag
// "<queue>#<i>[.<k>]", k chosen so that the partitions are spaced evenly
// over the Cluster's 16,384 slots (see the README's "Scaling out").
func PartitionKeys(prefix, queue string, partitions, i int) []string {
	names := store.PartitionNames(queue, partitions)
	if i < 0 || i >= len(names) {
		return nil
	}
	return QueueKeys(prefix, names[i])
}

// layoutTTL is how long a Client trusts the partitions it read of a queue.
// A number that grew is picked up within it (until then jobs go to the
// partitions the old number had, which are still served); a number that
// shrank is picked up at once, as the retired partitions refuse
// enqueues.
const layoutTTL = 30 * time.Second

type cachedLayout struct {
	l  store.Layout
	at time.Time
}

// layout returns queue's partition layout, read at most every layoutTTL.
func (c *Client) layout(ctx context.Context, queue string) (store.Layout, error) {
	if v, ok := c.layouts.Load(queue); ok {
		if e := v.(cachedLayout); time.Since(e.at) < layoutTTL {
			return e.l, nil
		}
	}
	l, err := c.st.Layout(ctx, queue)
	if err != nil {
		return store.Layout{}, err
	}
	c.layouts.Store(queue, cachedLayout{l: l, at: time.Now()})
	return l, nil
}

// partitions returns the names of queue's partitions that may hold jobs:
// those of its layout, then those of earlier layouts still draining.
func (c *Client) partitions(ctx context.Context, queue string) ([]string, error) {
	l, err := c.layout(ctx, queue)
	if err != nil {
		return nil, err
	}
	return allPartitions(queue, l), nil
}

// allPartitions lists the partitions of l, then those of its earlier
// layouts, each once.
func allPartitions(queue string, l store.Layout) []string {
	names := store.PartitionNames(queue, l.Partitions)
	if len(l.Prev) == 0 {
		return names
	}
	out := slices.Clone(names)
	for _, n := range l.Prev {
		for _, p := range store.PartitionNames(queue, n) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// home returns the partition of l that a job of partition key key goes to.
func home(queue string, l store.Layout, key string) string {
	if l.Partitions <= 1 {
		return queue
	}
	return store.PartitionNames(queue, l.Partitions)[store.PartitionOf(key, l.Partitions)]
}

// partitionIndexCursor wraps the cursor of one partition's pages (inner,
// "" for its first page) with the partition's place in the queue's list of
// partitions, for a queue of several: "P<i>;<inner>".
func partitionIndexCursor(i int, inner string) string {
	return encodeCursor("P" + strconv.Itoa(i) + ";" + inner)
}

// parsePartitionCursor undoes partitionIndexCursor; "" is the start.
func parsePartitionCursor(s string, partitions int) (int, string, error) {
	if s == "" {
		return 0, "", nil
	}
	text, ok := decodeCursor(s)
	rest, isPart := strings.CutPrefix(text, "P")
	idx, inner, found := strings.Cut(rest, ";")
	i, err := strconv.Atoi(idx)
	if !ok || !isPart || !found || err != nil || i < 0 || i >= partitions {
		return 0, "", invalid("Cursor", "is not a cursor of this partitioned queue's pages")
	}
	return i, inner, nil
}

// servePartitions prepares the partitions of queue for a Daemon that splits
// it into n: partitions of earlier layouts that are not in the new one are
// retired first (so no producer adds to them), those of the new one are
// taken out of retirement, and the layout is written. It returns the
// partitions to serve: the new layout's, then the retired ones that still
// hold jobs, which are served until they are empty (at the next start).
func (d *Daemon) servePartitions(ctx context.Context, queue string, n int) ([]string, error) {
	old, err := d.st.Layout(ctx, queue)
	if err != nil {
		return nil, err
	}
	names := store.PartitionNames(queue, n)
	if n <= 1 && old.Partitions <= 1 && len(old.Prev) == 0 {
		return names, nil // never split: nothing stored, nothing to write
	}
	var retired []string
	for _, p := range allPartitions(queue, old) {
		if !slices.Contains(names, p) {
			retired = append(retired, p)
		}
	}
	if err := d.st.SetRetired(ctx, retired, true); err != nil {
		return nil, err
	}
	if err := d.st.SetRetired(ctx, names[1:], false); err != nil {
		return nil, err
	}
	holding, err := d.st.HoldJobs(ctx, retired)
	if err != nil {
		return nil, err
	}
	serve := slices.Clone(names)
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
	if err := d.st.SetLayout(ctx, queue, store.Layout{Partitions: n, Prev: prev}); err != nil {
		return nil, err
	}
	if len(serve) > len(names) {
		d.cfg.Logger.Info("serving retired partitions until they are empty", "queue", queue,
			"partitions", n, "draining", serve[len(names):])
	}
	return serve, nil
}

// withZeroLast returns parts with partition 0 (the first) moved to the end:
// the order of changes whose end partition 0 reports (a pause, which Stats
// reads there) or that need partition 0 to the end (the layout, which
// names the others).
func withZeroLast(parts []string) []string {
	return append(slices.Clone(parts[1:]), parts[0])
}

// eachPartition runs f on every partition of queue, in order, partition 0
// last when zeroLast, and joins the errors, each naming its partition on
// a queue of several.
func (c *Client) eachPartition(ctx context.Context, queue string, zeroLast bool, f func(partition string) error) error {
	parts, err := c.partitions(ctx, queue)
	if err != nil {
		return err
	}
	if len(parts) == 1 {
		return f(parts[0])
	}
	if zeroLast {
		parts = withZeroLast(parts)
	}
	var errs []error
	for _, p := range parts {
		if err := f(p); err != nil {
			errs = append(errs, fmt.Errorf("partition %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// findJob runs try on the partition of queue that holds job id: its home
// by the current layout first (one call, the common case), then the
// others (a job of an earlier layout, or one placed by its unique key
// under a caller's id), until try reports it found the job. It returns
// store.ErrNotFound when no partition had it.
func (c *Client) findJob(ctx context.Context, queue, id string, try func(partition string) (bool, error)) error {
	l, err := c.layout(ctx, queue)
	if err != nil {
		return err
	}
	first := home(queue, l, id)
	if found, err := try(first); found || err != nil {
		return err
	}
	for _, p := range allPartitions(queue, l) {
		if p == first {
			continue
		}
		if found, err := try(p); found || err != nil {
			return err
		}
	}
	return store.ErrNotFound
}

// acrossPartitions runs f, which changes the jobs ids of one partition
// and reports which it changed, on every partition of queue with the ids
// not changed yet, and returns how many were changed.
func (c *Client) acrossPartitions(ctx context.Context, queue string, ids []string, f func(partition string, ids []string) ([]bool, error)) (int, error) {
	n := 0
	err := c.eachPartition(ctx, queue, false, func(p string) error {
		if len(ids) == 0 {
			return nil
		}
		done, err := f(p, ids)
		rest := ids[:0:0]
		for i, id := range ids {
			if i < len(done) && done[i] {
				n++
			} else {
				rest = append(rest, id)
			}
		}
		ids = rest
		return err
	})
	return n, err
}

// stats sums the sizes of queue's partitions, read in one round trip; the
// pause flag is partition 0's (Pause sets every partition's, partition
// 0's last).
func (c *Client) stats(ctx context.Context, queue string) (store.Stats, error) {
	parts, err := c.partitions(ctx, queue)
	if err != nil {
		return store.Stats{}, err
	}
	if len(parts) == 1 {
		return c.st.Stats(ctx, queue)
	}
	all, err := c.st.StatsOf(ctx, parts)
	if err != nil {
		return store.Stats{}, err
	}
	return store.Total(all), nil
}

// Partitions reads how many partitions queue has (QueueOptions.Partitions,
// as the processes serving it stored it; 1 for a queue never split) and
// refreshes the Client's copy, which it otherwise reads again every 30s.
func (c *Client) Partitions(ctx context.Context, queue string) (int, error) {
	if err := ValidateQueueName(queue); err != nil {
		return 0, err
	}
	c.layouts.Delete(queue)
	l, err := c.layout(ctx, queue)
	return l.Partitions, err
}

// PartitionLeaders returns, for each partition of queue in order (one for
// a queue never split), the id of the process that leads it (Daemon.ID);
// "" for a partition no process leads. One round trip.
func (c *Client) PartitionLeaders(ctx context.Context, queue string) ([]string, error) {
	if err := ValidateQueueName(queue); err != nil {
		return nil, err
	}
	l, err := c.layout(ctx, queue)
	if err != nil {
		return nil, err
	}
	return c.st.Leaders(ctx, store.PartitionNames(queue, l.Partitions))
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

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

// layout reads queue's layout now: operators' reads and changes act on
// the partitions as they are, never on a copy that may be stale.
func (c *Client) layout(ctx context.Context, queue string) (store.Layout, error) {
	return c.layer.Layout(ctx, queue)
}

// partitions returns the names of queue's partitions that may hold jobs:
// those of its layout, then those of earlier layouts still draining.
func (c *Client) partitions(ctx context.Context, queue string) ([]string, error) {
	return c.layer.Partitions(ctx, queue)
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

// servePartitions makes the layout of queue n partitions (queue.Layer.Serve)
// and returns the partitions to serve: the layout's, then the retired ones
// that still hold jobs, served until they are empty (at the next start).
func (d *Daemon) servePartitions(ctx context.Context, queue string, n int) ([]string, error) {
	serve, err := d.layer.Serve(ctx, queue, n)
	if err != nil {
		return nil, err
	}
	if names := store.PartitionNames(queue, n); len(serve) > len(names) {
		d.cfg.Logger.Info("serving retired partitions until they are empty", "queue", queue,
			"partitions", n, "draining", serve[len(names):])
	}
	return serve, nil
}

// eachPartition runs f on every partition of queue, in order, and joins
// the errors, each naming its partition on a queue of several.
func (c *Client) eachPartition(ctx context.Context, queue string, f func(partition string) error) error {
	parts, err := c.partitions(ctx, queue)
	if err != nil {
		return err
	}
	if len(parts) == 1 {
		return f(parts[0])
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
	first := l.Home(queue, id)
	if found, err := try(first); found || err != nil {
		return err
	}
	for _, p := range l.All(queue) {
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
	err := c.eachPartition(ctx, queue, func(p string) error {
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
// queue is paused when every partition is (store.Total).
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
// as the processes serving it stored it; 1 for a queue never split).
func (c *Client) Partitions(ctx context.Context, queue string) (int, error) {
	if err := ValidateQueueName(queue); err != nil {
		return 0, err
	}
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
	return c.st.Leaders(ctx, l.Names(queue))
}

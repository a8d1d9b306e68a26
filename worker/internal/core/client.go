package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/queue"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Client is a connection to one key prefix: the store and the queue layer
// over it. worker.Client and admin.Client each hold one.
type Client struct {
	St *store.Store
	// Layer is the queues' records: layouts, settings, pause. Operators'
	// reads and changes read the layout through it each time, never a
	// copy that may be stale.
	Layer  *queue.Layer
	Prefix string
	// Served answers whether daemons ever served a queue and kind.
	Served *Served
}

// New returns a Client on rdb under prefix (validated by the caller),
// counting its Redis calls in m (nil: no metrics).
func New(rdb rueidis.Client, prefix string, m *metrics.Set) *Client {
	st := store.New(rdb, prefix, m.Redis())
	return &Client{St: st, Layer: queue.New(st), Prefix: prefix, Served: NewServed(st)}
}

// EachPartition runs f on every partition of queue, in order, and joins
// the errors, each naming its partition on a queue of several.
func (c *Client) EachPartition(ctx context.Context, queue string, f func(partition string) error) error {
	parts, err := c.Layer.Partitions(ctx, queue)
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

// FindJob runs try on the partition of queue that holds job id: its home
// by the current layout first (one call, the common case), then the
// others (a job of an earlier layout, or one placed by its unique key
// under a caller's id), until try reports it found the job. It returns
// store.ErrNotFound when no partition had it.
func (c *Client) FindJob(ctx context.Context, queue, id string, try func(partition string) (bool, error)) error {
	l, err := c.Layer.Layout(ctx, queue)
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

// Stats sums the sizes of queue's partitions, read in one round trip; the
// queue is paused when every partition is (store.Total).
func (c *Client) Stats(ctx context.Context, queue string) (store.Stats, error) {
	parts, err := c.Layer.Partitions(ctx, queue)
	if err != nil {
		return store.Stats{}, err
	}
	if len(parts) == 1 {
		return c.St.Stats(ctx, queue)
	}
	all, err := c.St.StatsOf(ctx, parts)
	if err != nil {
		return store.Stats{}, err
	}
	return store.Total(all), nil
}

package admin

import (
	"context"

	"github.com/seed-53d105c9/courier/worker"
)

// Partitions reads how many partitions queue has
// (worker.QueueOptions.Partitions, as the processes serving it stored it;
// 1 for a queue never split).
func (c *Client) Partitions(ctx context.Context, queue string) (int, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return 0, err
	}
	l, err := c.core.Layer.Layout(ctx, queue)
	return l.Partitions, err
}

// PartitionLeaders returns, for each partition of queue in order (one for
// a queue never split), the id of the process that leads it
// (worker.Daemon.ID); "" for a partition no process leads. One round trip.
func (c *Client) PartitionLeaders(ctx context.Context, queue string) ([]string, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return nil, err
	}
	l, err := c.core.Layer.Layout(ctx, queue)
	if err != nil {
		return nil, err
	}
	return c.core.St.Leaders(ctx, l.Names(queue))
}

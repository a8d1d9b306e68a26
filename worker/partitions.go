package worker

import (
	"context"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// MaxPartitions bounds QueueOptions.Partitions.
const MaxPartitions = store.MaxPartitions

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

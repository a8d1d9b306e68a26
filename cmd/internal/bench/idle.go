package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// idle watches an idle pool and counts the commands it sends.
func (b *bench) idle(ctx context.Context) (string, error) {
	stop, err := b.startDaemon(ctx, worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }))
	if err != nil {
		return "", err
	}
	defer func() { _ = stop() }() // on an early return; the result checks its error
	if !sleep(ctx, time.Second) { // start-up traffic is not idle traffic
		return "", ctx.Err()
	}
	startCount := b.counted.n.Load()
	if !sleep(ctx, b.opts.duration) {
		return "", ctx.Err()
	}
	cmds := b.counted.n.Load() - startCount
	if err := stop(); err != nil {
		return "", err
	}
	return fmt.Sprintf("mode=idle queues=1 seconds=%.0f redis_cmds=%d redis_cmds_per_s=%.2f",
		b.opts.duration.Seconds(), cmds, float64(cmds)/b.opts.duration.Seconds()), nil
}

package bench

import (
	"context"
	"sync/atomic"

	"github.com/redis/rueidis"
)

// countingClient counts the commands Courier sends (pub/sub excluded).
type countingClient struct {
	rueidis.Client
	n atomic.Int64
}

// Do counts and sends one command.
func (c *countingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.Do(ctx, cmd)
}

// DoMulti counts and sends a pipeline of commands.
func (c *countingClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.n.Add(int64(len(cmds)))
	return c.Client.DoMulti(ctx, cmds...)
}

var _ rueidis.Client = (*countingClient)(nil)

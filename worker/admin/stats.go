package admin

import (
	"context"

	"github.com/seed-53d105c9/courier/worker"
)

// QueueStats counts a queue's jobs by state and says whether it is paused
// (Client.Stats).
type QueueStats struct {
	Scheduled int64
	Ready     int64
	Active    int64
	Dead      int64
	// Completed counts the finished jobs the queue retains
	// (worker.QueueOptions.RetainCompleted); 0 for a queue that retains none.
	Completed int64
	// Cancelled counts the cancelled jobs kept (Cancel) until the leader
	// trims them or an operator requeues or purges them (Triage).
	Cancelled int64
	// Paused reports that the queue is paused (Client.Pause): no process
	// claims its jobs until Client.Resume.
	Paused bool
}

// Stats counts the jobs of queue by state and reads its pause flag.
func (c *Client) Stats(ctx context.Context, queue string) (QueueStats, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return QueueStats{}, err
	}
	s, err := c.core.Stats(ctx, queue)
	if err != nil {
		return QueueStats{}, err
	}
	return QueueStats{Scheduled: s.Scheduled, Ready: s.Ready, Active: s.Active, Dead: s.Dead, Completed: s.Completed, Cancelled: s.Cancelled, Paused: s.Paused}, nil
}

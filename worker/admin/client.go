package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// Client is the operator's handle on Courier straight on Redis: it
// implements Operator, and the reads the daemon, the web UI and the tools
// need beyond it. It is safe for concurrent use; make one per process.
type Client struct {
	w *worker.Client
}

var _ Operator = (*Client)(nil)

// NewClient returns a Client on the Redis client rdb with the same Config
// as the application's worker.Client (Prefix above all: an operator on
// another prefix sees none of the application's queues).
func NewClient(rdb rueidis.Client, cfg worker.Config) (*Client, error) {
	w, err := worker.NewClient(rdb, cfg)
	if err != nil {
		return nil, err
	}
	return &Client{w: w}, nil
}

// Enqueue adds jobs, as worker.Client.EnqueueMany does.
func (c *Client) Enqueue(ctx context.Context, specs []worker.JobSpec) ([]worker.EnqueueResult, error) {
	return c.w.EnqueueMany(ctx, specs)
}

// Get reads a job, as worker.Client.Get does.
func (c *Client) Get(ctx context.Context, queue, id string) (*worker.Job, error) {
	return c.w.Get(ctx, queue, id)
}

// Cancel cancels a job.
func (c *Client) Cancel(ctx context.Context, queue, id string) error {
	return c.w.Cancel(ctx, queue, id)
}

// Queues returns a page of the known queue names.
func (c *Client) Queues(ctx context.Context, p QueueListParams) (QueuePage, error) {
	limit := p.Limit
	if limit == 0 {
		limit = QueuesPerPageDefault
	}
	return c.w.QueuesPage(ctx, p.Only, p.Cursor, limit)
}

// Stats counts the jobs of queue by state and reads its pause flag.
func (c *Client) Stats(ctx context.Context, queue string) (QueueStats, error) {
	return c.w.Stats(ctx, queue)
}

// Jobs reads a page of the jobs of a queue in one state.
func (c *Client) Jobs(ctx context.Context, p JobListParams) (JobPage, error) {
	return c.w.List(ctx, p.Queue, worker.ListQuery{State: p.State, Cursor: p.Cursor, Limit: p.Limit, Dead: p.Dead})
}

// Triage requeues or purges the selected dead jobs.
func (c *Client) Triage(ctx context.Context, p TriageParams) (TriageResult, error) {
	sel := worker.DeadSelection{IDs: p.IDs, Filter: p.Filter}
	opt := worker.TriageOptions{DryRun: p.DryRun, Cursor: p.Cursor, Max: p.Max}
	switch p.Action {
	case TriageRequeue:
		return c.w.RequeueDead(ctx, p.Queue, sel, opt)
	case TriagePurge:
		return c.w.PurgeDead(ctx, p.Queue, sel, opt)
	}
	return TriageResult{}, &worker.ValidationError{Field: "Action", Reason: fmt.Sprintf("must be %q or %q (got %q)", TriageRequeue, TriagePurge, p.Action)}
}

// Pause pauses queue: no process claims its jobs until Resume.
func (c *Client) Pause(ctx context.Context, queue string) error { return c.w.Pause(ctx, queue) }

// Resume ends the pause of queue.
func (c *Client) Resume(ctx context.Context, queue string) error { return c.w.Resume(ctx, queue) }

// Fleet returns the processes serving queue and its leader.
func (c *Client) Fleet(ctx context.Context, queue string) (Fleet, error) {
	return c.w.Fleet(ctx, queue)
}

// Forget removes a queue an operator retired.
func (c *Client) Forget(ctx context.Context, queue string) error {
	return c.w.ForgetQueue(ctx, queue)
}

// History returns queue's minutes from from to to.
func (c *Client) History(ctx context.Context, queue string, from, to time.Time) ([]HistoryMinute, error) {
	return c.w.History(ctx, queue, from, to)
}

// Periodic returns the periodic schedules of queue, sorted by name.
func (c *Client) Periodic(ctx context.Context, queue string) ([]PeriodicStatus, error) {
	return c.w.Periodic(ctx, queue)
}

// Partitions reads how many partitions queue has.
func (c *Client) Partitions(ctx context.Context, queue string) (int, error) {
	return c.w.Partitions(ctx, queue)
}

// PartitionLeaders returns the id of the process leading each partition
// of queue.
func (c *Client) PartitionLeaders(ctx context.Context, queue string) ([]string, error) {
	return c.w.PartitionLeaders(ctx, queue)
}

// CheckPrefix checks that a live daemon runs on the Client's key prefix.
func (c *Client) CheckPrefix(ctx context.Context) error { return c.w.CheckPrefix(ctx) }

// QueuesKnown reports, for each name, whether it is a known queue.
func (c *Client) QueuesKnown(ctx context.Context, names ...string) ([]bool, error) {
	return c.w.QueuesKnown(ctx, names...)
}

// QueueCount returns how many queues are known.
func (c *Client) QueueCount(ctx context.Context) (int64, error) { return c.w.QueueCount(ctx) }

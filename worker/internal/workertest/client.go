package workertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Client is what a test drives: the application's worker.Client, with the
// operator's verbs of an admin.Client (Op) on the same Redis and Config, so
// a test enqueues and looks through one value. Enqueue and Get are the
// worker.Client's.
type Client struct {
	*worker.Client
	Op *admin.Client
}

// NewClient returns the Client pair for rdb and cfg.
func NewClient(t testing.TB, rdb rueidis.Client, cfg worker.Config) *Client {
	t.Helper()
	c, err := worker.NewClient(rdb, cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	op, err := admin.NewClient(rdb, cfg)
	if err != nil {
		t.Fatalf("admin.NewClient: %v", err)
	}
	return &Client{Client: c, Op: op}
}

// Stats is admin.Client.Stats.
func (c *Client) Stats(ctx context.Context, queue string) (admin.QueueStats, error) {
	return c.Op.Stats(ctx, queue)
}

// Cancel is admin.Client.Cancel.
func (c *Client) Cancel(ctx context.Context, queue, id string) error {
	return c.Op.Cancel(ctx, queue, id)
}

// Pause is admin.Client.Pause.
func (c *Client) Pause(ctx context.Context, queue string) error { return c.Op.Pause(ctx, queue) }

// Resume is admin.Client.Resume.
func (c *Client) Resume(ctx context.Context, queue string) error { return c.Op.Resume(ctx, queue) }

// Fleet is admin.Client.Fleet.
func (c *Client) Fleet(ctx context.Context, queue string) (admin.Fleet, error) {
	return c.Op.Fleet(ctx, queue)
}

// Forget is admin.Client.Forget.
func (c *Client) Forget(ctx context.Context, queue string) error { return c.Op.Forget(ctx, queue) }

// Jobs is admin.Client.Jobs.
func (c *Client) Jobs(ctx context.Context, p admin.JobListParams) (admin.JobPage, error) {
	return c.Op.Jobs(ctx, p)
}

// Triage is admin.Client.Triage.
func (c *Client) Triage(ctx context.Context, p admin.TriageParams) (admin.TriageResult, error) {
	return c.Op.Triage(ctx, p)
}

// Queues is admin.Client.Queues.
func (c *Client) Queues(ctx context.Context, p admin.QueueListParams) (admin.QueuePage, error) {
	return c.Op.Queues(ctx, p)
}

// History is admin.Client.History.
func (c *Client) History(ctx context.Context, queue string, from, to time.Time) ([]admin.HistoryMinute, error) {
	return c.Op.History(ctx, queue, from, to)
}

// Partitions is admin.Client.Partitions.
func (c *Client) Partitions(ctx context.Context, queue string) (int, error) {
	return c.Op.Partitions(ctx, queue)
}

// PartitionLeaders is admin.Client.PartitionLeaders.
func (c *Client) PartitionLeaders(ctx context.Context, queue string) ([]string, error) {
	return c.Op.PartitionLeaders(ctx, queue)
}

// Periodic is admin.Client.Periodic.
func (c *Client) Periodic(ctx context.Context, queue string) ([]admin.PeriodicStatus, error) {
	return c.Op.Periodic(ctx, queue)
}

// CheckPrefix is admin.Client.CheckPrefix.
func (c *Client) CheckPrefix(ctx context.Context) error { return c.Op.CheckPrefix(ctx) }

// AllQueues lists every known queue, page after page.
func (c *Client) AllQueues(ctx context.Context) ([]string, error) {
	var names []string
	p := admin.QueueListParams{Limit: admin.QueuesPerPageMax}
	for {
		page, err := c.Op.Queues(ctx, p)
		if err != nil {
			return nil, err
		}
		names = append(names, page.Names...)
		if p.Cursor = page.Next; p.Cursor == "" {
			return names, nil
		}
	}
}

// Requeue requeues the dead jobs ids of queue and returns how many moved.
func (c *Client) Requeue(ctx context.Context, queue string, ids ...string) (int, error) {
	return c.triage(ctx, queue, admin.TriageRequeue, ids)
}

// Purge deletes the dead jobs ids of queue and returns how many went.
func (c *Client) Purge(ctx context.Context, queue string, ids ...string) (int, error) {
	return c.triage(ctx, queue, admin.TriagePurge, ids)
}

// RequeueCancelled requeues the cancelled jobs ids of queue and returns
// how many moved.
func (c *Client) RequeueCancelled(ctx context.Context, queue string, ids ...string) (int, error) {
	res, err := c.Op.Triage(ctx, admin.TriageParams{Queue: queue, State: worker.StateCancelled, Action: admin.TriageRequeue, IDs: ids})
	return res.Changed, err
}

// RequeueAll requeues every dead job of queue and returns how many moved.
func (c *Client) RequeueAll(ctx context.Context, queue string) (int, error) {
	return c.triage(ctx, queue, admin.TriageRequeue, nil)
}

// PurgeAll deletes every dead job of queue and returns how many went.
func (c *Client) PurgeAll(ctx context.Context, queue string) (int, error) {
	return c.triage(ctx, queue, admin.TriagePurge, nil)
}

// triage runs action on the dead jobs ids of queue, or on all of them when
// ids is nil, and returns how many changed.
func (c *Client) triage(ctx context.Context, queue string, action admin.TriageAction, ids []string) (int, error) {
	res, err := c.Op.Triage(ctx, admin.TriageParams{Queue: queue, Action: action, IDs: ids})
	return res.Changed, err
}

// Enqueue adds one job and fails the test on an error.
func Enqueue(t testing.TB, c *Client, spec worker.JobSpec) string {
	t.Helper()
	id, err := c.Enqueue(t.Context(), spec)
	if err != nil {
		t.Fatalf("Enqueue(%+v): %v", spec, err)
	}
	return id
}

// GetJob reads a job and fails the test on an error.
func GetJob(t testing.TB, c *Client, queue, id string) *worker.Job {
	t.Helper()
	job, err := c.Get(t.Context(), queue, id)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", queue, id, err)
	}
	return job
}

// IsGone reports whether the job no longer exists; other errors fail the test.
func IsGone(t testing.TB, c *Client, queue, id string) bool {
	t.Helper()
	_, err := c.Get(t.Context(), queue, id)
	if err != nil && !errors.Is(err, worker.ErrNotFound) {
		t.Fatalf("Get(%q, %q): %v", queue, id, err)
	}
	return err != nil
}

// InState reports whether the job exists and is in state.
func InState(t testing.TB, c *Client, queue, id string, state worker.State) bool {
	t.Helper()
	job, err := c.Get(t.Context(), queue, id)
	if errors.Is(err, worker.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", queue, id, err)
	}
	return job.State == state
}

// Stats reads the statistics of queue and fails the test on an error.
func Stats(t testing.TB, c *Client, queue string) admin.QueueStats {
	t.Helper()
	s, err := c.Stats(t.Context(), queue)
	if err != nil {
		t.Fatalf("Stats(%q): %v", queue, err)
	}
	return s
}

// ListAll reads every page of q, and the size of each.
func ListAll(t testing.TB, c *Client, q admin.JobListParams) (jobs []*worker.Job, sizes []int) {
	t.Helper()
	for range 1000 {
		page, err := c.Jobs(t.Context(), q)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", q, err)
		}
		jobs = append(jobs, page.Jobs...)
		sizes = append(sizes, len(page.Jobs))
		if page.Next == "" {
			return jobs, sizes
		}
		q.Cursor = page.Next
	}
	t.Fatalf("Jobs(%+v) did not end", q)
	return nil, nil
}

// JobIDs returns the ids of jobs, in their order.
func JobIDs(jobs []*worker.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

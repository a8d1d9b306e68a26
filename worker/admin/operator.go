package admin

import (
	"context"

	"github.com/seed-53d105c9/courier/worker"
)

// Operator is everything an operator can ask of Courier: the HTTP API
// serves it route for route, and the courier CLI does its work through it,
// whether it runs against Redis (*Client) or through the API (--api).
type Operator interface {
	// Enqueue adds jobs; each result says whether the job was added and,
	// when not, why (worker.Client.EnqueueMany).
	Enqueue(ctx context.Context, specs []worker.JobSpec) ([]worker.EnqueueResult, error)
	// Get reads one job.
	Get(ctx context.Context, queue, id string) (*worker.Job, error)
	// Cancel stops a job: a waiting one is removed, a running one is
	// interrupted and moved to the dead set.
	Cancel(ctx context.Context, queue, id string) error
	// Queues lists the known queues a page at a time.
	Queues(ctx context.Context, p QueueListParams) (QueuePage, error)
	// Stats counts a queue's jobs by state and says whether it is paused.
	Stats(ctx context.Context, queue string) (QueueStats, error)
	// Jobs lists a page of a queue's jobs in one state (the dead set
	// included, with its filter).
	Jobs(ctx context.Context, p JobListParams) (JobPage, error)
	// Triage requeues or purges dead jobs, chosen by id or by filter.
	Triage(ctx context.Context, p TriageParams) (TriageResult, error)
	// Pause stops every process from claiming the queue's jobs.
	Pause(ctx context.Context, queue string) error
	// Resume lets the queue's jobs be claimed again.
	Resume(ctx context.Context, queue string) error
	// Fleet returns the processes serving the queue and its leader.
	Fleet(ctx context.Context, queue string) (Fleet, error)
	// Forget removes a queue no process serves and that holds no job.
	Forget(ctx context.Context, queue string) error
	// Keys returns the queue's job keys with the most waiting jobs.
	Keys(ctx context.Context, queue string, n int) (KeyList, error)
	// Key returns what the queue holds of one job key.
	Key(ctx context.Context, queue, key string) (KeyStats, error)
	// SetKeyLimits sets a job key's own cap and weight (DefaultKeyLimits
	// removes them).
	SetKeyLimits(ctx context.Context, queue, key string, l KeyLimits) error
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// JobSpec describes a job to enqueue.
type JobSpec struct {
	// Queue is the queue's name. Required.
	Queue string
	// Kind names what the job is, for a queue that serves several kinds
	// (Kinds): 1 to MaxKindLen bytes of A-Z a-z 0-9 . _ - : /. Empty: the
	// queue's one handler, or its Kinds[""].
	Kind string
	// Payload is handed to the handler as is; it may be empty.
	Payload []byte
	// ID identifies the job within its queue. Set it to make enqueueing
	// idempotent: a second job with the same id is refused with ErrDuplicate
	// while the first exists. Empty means a generated, time-sortable id.
	ID string
	// Delay postpones the job by this long (measured on the Redis clock).
	Delay time.Duration
	// RunAt schedules the job at a moment; a moment in the past means now.
	// Set Delay or RunAt, not both.
	RunAt time.Time
	// MaxAttempts limits the job's attempts, 1 to MaxAttemptsLimit
	// (1,000); 0 means the queue's default.
	MaxAttempts int
	// Timeout limits each attempt's run time, 1ms to TimeoutLimit (168h);
	// 0 means the queue's default.
	Timeout time.Duration
	// Priority orders the queue's due jobs: higher first (see Priority).
	// The zero value is PriorityNormal.
	Priority Priority
	// Key is the tenant, customer, user or resource the job belongs to
	// (any string within the id rules; empty: none). The queue's
	// QueueOptions.KeyConcurrency caps how many jobs of one key run at
	// once, across every process, and claims share the free slots among
	// the keys that have work due, so one key's backlog never delays
	// another key's job (docs/keys.md). On a partitioned queue a keyed job
	// lives in its key's partition, and so does its UniqueKey: a unique
	// key is enforced among the jobs of one key there.
	Key string
	// UniqueKey makes the job unique in its queue (any string within the
	// id rules; empty: none): until this job has finished (acked, dead or
	// cancelled), an enqueue with the same key is refused with
	// ErrUniqueKeyHeld, and EnqueueResult.ID (Enqueue's id) is this job's.
	UniqueKey string
	// UniqueFor keeps the key held this long after the enqueue (or after
	// the finish, with UniqueAfterFinish), even once the job finished, so
	// a producer retrying after a timeout never creates a second job. At
	// most one year (MaxUniqueFor); 0 means until the job finishes.
	UniqueFor time.Duration
	// UniqueAfterFinish counts UniqueFor from the job's finish instead of
	// its enqueue.
	UniqueAfterFinish bool
	// Durability asks that the job be confirmed on replicas before Enqueue
	// returns (see Durability); the zero value takes the Client's default
	// for the queue (Config.Durability).
	Durability Durability
	// Headers travel with the job, unchanged across retries and requeues
	// (Job.Headers). At most MaxHeaders; names of 1 to 64 bytes from a-z
	// 0-9 . _ -, values of at most 1,024 bytes of UTF-8 without control
	// characters, 8 KiB in all. With Config.TracerProvider set, the Client
	// adds the trace context in a copy: the map given is never changed.
	Headers map[string]string
}

// EnqueueResult is the outcome of one job of EnqueueMany.
type EnqueueResult struct {
	// ID is the job's id; when Err says its unique key is held, the id of
	// the job that holds it.
	ID  string
	Err error // nil, or wraps ErrDuplicate
	// Warning, set by the operator's admin.Client.Enqueue only, says the
	// job was enqueued to a queue or kind no daemon has ever served.
	Warning string
}

// Client is the application's producer: it puts jobs on queues, reads a
// job back (Get) and waits for a queue to empty (WaitEmpty). It is safe
// for concurrent use; make one per process. The operator's side (lists,
// stats, triage, pause, cancel, fleet) is package worker/admin.
type Client struct {
	core    *core.Client // the store and the queue layer, shared with admin.Client's code
	metrics *metrics.Set // nil without Config.Registerer
	cfg     Config
	ids     idGen
	tracer  *tracer                       // nil without Config.TracerProvider
	known   sync.Map                      // queue name → time.Time it was last recorded in the queue set
	hooks   atomic.Pointer[[]EnqueueHook] // Use's, in order
	hookMu  sync.Mutex                    // serialises Use
}

// NewClient returns a Client on the Redis client rdb (see rueidis.NewClient;
// Redis Cluster is detected by rueidis).
func NewClient(rdb rueidis.Client, cfg Config) (*Client, error) {
	if rdb == nil {
		return nil, errors.New("worker: nil Redis client")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	m, err := metrics.New(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	for q := range cfg.Durability {
		m.Replicated(q) // the series start at zero
	}
	return &Client{core: core.New(rdb, cfg.Prefix, m), metrics: m, cfg: cfg, tracer: newTracer(cfg.TracerProvider)}, nil
}

// Enqueue adds one job and returns its id. A job with the same id in the same
// queue is left untouched and the error wraps ErrDuplicate; so is a job
// holding the same UniqueKey, whose id is then returned. On a Redis error
// the job may or may not have been added; the id (a generated one too) is
// still returned with the error: enqueue the spec again with that ID to
// retry safely (ErrDuplicate then means the first call had added it).
func (c *Client) Enqueue(ctx context.Context, spec JobSpec) (string, error) {
	res, err := c.EnqueueMany(ctx, []JobSpec{spec})
	if err != nil {
		if len(res) == 1 {
			return res[0].ID, err
		}
		return "", err
	}
	return res[0].ID, res[0].Err
}

// recordQueuesEvery is how often a Client records a queue it enqueues to
// again: a leader forgets queues that look unused (carrier), and one that
// is used again is listed within this long.
const recordQueuesEvery = time.Minute

// recordQueues adds queue names to the set of known queues, at most once
// per recordQueuesEvery per process and queue.
func (c *Client) recordQueues(ctx context.Context, queues []string) error {
	var fresh []string
	now := time.Now()
	for _, q := range queues {
		if at, ok := c.known.Load(q); !ok || now.Sub(at.(time.Time)) >= recordQueuesEvery {
			fresh = append(fresh, q)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	if err := c.core.St.AddQueues(ctx, fresh...); err != nil {
		return err
	}
	for _, q := range fresh {
		c.known.Store(q, now)
	}
	return nil
}

// Get reads a job. It returns an error wrapping ErrNotFound when the queue
// has no job with that id.
func (c *Client) Get(ctx context.Context, queue, id string) (*Job, error) {
	if err := validateRef(queue, id); err != nil {
		return nil, err
	}
	var snap store.Snapshot
	err := c.core.FindJob(ctx, queue, id, func(partition string) (bool, error) {
		var err error
		snap, err = c.core.St.Get(ctx, partition, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("queue %q job %q: %w", queue, id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	job := jobFromRecord(queue, &snap.Record)
	switch snap.Set {
	case store.SetDue:
		job.RunAt = snap.Score
		job.State = StateReady
		if snap.Score.After(snap.Now) {
			job.State = StateScheduled
		}
	case store.SetActive:
		job.State = StateActive
		job.LeaseUntil = snap.Score
	case store.SetDead:
		job.State = StateDead
		job.DiedAt = snap.Score
	case store.SetCompleted:
		job.State = StateCompleted // Result from the record
		job.FinishedAt = snap.Score
	case store.SetCancelled:
		job.State = StateCancelled
		job.FinishedAt = snap.Score
	default:
		return nil, fmt.Errorf("queue %q job %q: record is in no set (inconsistent data)", queue, id)
	}
	return job, nil
}

func validateRef(queue, id string) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	return ValidateID(id)
}

package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// JobSpec describes a job to enqueue.
type JobSpec struct {
	// Queue is the queue's name. Required.
	Queue string
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
	// MaxAttempts limits the job's attempts; 0 means the queue's default.
	MaxAttempts int
	// Timeout limits each attempt's run time; 0 means the queue's default.
	Timeout time.Duration
	// Priority orders the queue's due jobs: higher first (see Priority).
	// The zero value is PriorityNormal.
	Priority Priority
	// UniqueKey makes the job unique in its queue (any string within the
	// id rules; empty means no uniqueness): until this job has finished
	// (acked, dead or cancelled), an enqueue with the same key is refused
	// with ErrUniqueKeyHeld (an ErrDuplicate), and EnqueueResult.ID
	// (Enqueue's id) is this job's.
	// Enforced in the enqueue script, across the fleet.
	UniqueKey string
	// UniqueFor keeps the key held for a window as well: this long after
	// the enqueue, or after the job finished with UniqueAfterFinish, even
	// if the job finished before. So a producer that retries after a
	// timeout never creates a second job, even when the first already ran.
	// At most one year (MaxUniqueFor); 0 means until the job finishes.
	UniqueFor time.Duration
	// UniqueAfterFinish counts UniqueFor from the job's finish instead of
	// its enqueue.
	UniqueAfterFinish bool
	// Durability asks that the job be confirmed on replicas before Enqueue
	// returns (see Durability); the zero value takes the Client's default
	// for the queue (Config.Durability).
	Durability Durability
}

// EnqueueResult is the outcome of one job of EnqueueMany.
type EnqueueResult struct {
	// ID is the job's id; when Err says its unique key is held, the id of
	// the job that holds it.
	ID  string
	Err error // nil, or wraps ErrDuplicate
}

// Client puts jobs on queues and inspects them. It is safe for concurrent
// use; make one per process.
type Client struct {
	st      *store.Store
	metrics *metrics.Set // nil without Config.Registerer
	cfg     Config
	ids     idGen
	known   sync.Map // queue name → time.Time it was last recorded in the queue set
	layouts sync.Map // queue name → cachedLayout: its partitions
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
	return &Client{st: store.New(rdb, cfg.Prefix, m.Redis()), metrics: m, cfg: cfg}, nil
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

// EnqueueMany adds jobs, up to 1,000 per script call and all calls in one
// round trip per queue. If any spec is invalid nothing is written and the
// error names the spec and field. Otherwise each result says whether its job
// was added or its id existed (ErrDuplicate, also for an id repeated within
// jobs). On a Redis error some jobs may have been added; the results then
// still carry every job's id (generated ones included) and no Err: enqueue
// the specs again with those ids to retry safely. When Redis is out of
// memory the error wraps ErrRedisOOM and says which jobs were stored.
func (c *Client) EnqueueMany(ctx context.Context, specs []JobSpec) ([]EnqueueResult, error) {
	now := time.Now()
	results := make([]EnqueueResult, len(specs))
	jobs := make([]store.NewJob, len(specs))
	var queues []string
	for i := range specs {
		job, err := c.newJob(&specs[i], now)
		if err != nil {
			var ve *ValidationError
			if len(specs) > 1 && errors.As(err, &ve) {
				ve.Field = fmt.Sprintf("specs[%d].%s", i, ve.Field)
			}
			return nil, err
		}
		jobs[i] = job
		results[i].ID = job.ID
		if !slices.Contains(queues, specs[i].Queue) {
			queues = append(queues, specs[i].Queue)
		}
	}
	if err := c.recordQueues(ctx, queues); err != nil {
		if errors.Is(err, store.ErrOOM) {
			return results, fmt.Errorf("enqueue refused, nothing stored: %w: %w", ErrRedisOOM, err)
		}
		return results, err
	}
	done := make([]bool, len(specs))
	for _, q := range queues {
		if err := c.enqueueQueue(ctx, q, specs, jobs, results, done, now); err != nil {
			return results, err
		}
	}
	return results, nil
}

// enqueueGroup is the jobs of one queue that go to one partition with one
// Durability: one pipeline.
type enqueueGroup struct {
	partition  string
	durability Durability
	index      []int // into the specs
	jobs       []store.NewJob
}

// enqueueQueue writes the jobs of specs that go to queue, partition by
// partition, and fills their results. A partition that was retired since
// the layout was read (ErrRetired: nothing written) sends its jobs again
// by the new layout, once.
func (c *Client) enqueueQueue(ctx context.Context, queue string, specs []JobSpec, jobs []store.NewJob, results []EnqueueResult, done []bool, now time.Time) error {
	for attempt := 0; ; attempt++ {
		l, err := c.layout(ctx, queue)
		if err != nil {
			return err
		}
		var groups []*enqueueGroup
		for i := range specs {
			if specs[i].Queue != queue || done[i] {
				continue
			}
			c.placeID(&specs[i], &jobs[i], l, now)
			results[i].ID = jobs[i].ID
			part, dur := home(queue, l, cmp.Or(jobs[i].Unique.Key, jobs[i].ID)), c.durabilityOf(&specs[i])
			var g *enqueueGroup
			for _, o := range groups {
				if o.partition == part && o.durability == dur {
					g = o
					break
				}
			}
			if g == nil {
				// Most calls make one group: room for every job up front
				// saves growing the slices job by job.
				g = &enqueueGroup{partition: part, durability: dur,
					index: make([]int, 0, len(specs)-i), jobs: make([]store.NewJob, 0, len(specs)-i)}
				groups = append(groups, g)
			}
			g.index = append(g.index, i)
			g.jobs = append(g.jobs, jobs[i])
		}
		// The partitions' pipelines go out at once: each is its own round
		// trip, on its own node of a Cluster.
		errs := make([]error, len(groups))
		if len(groups) == 1 {
			errs[0] = c.enqueueGroup(ctx, queue, groups[0], results, done)
		} else {
			var wg sync.WaitGroup
			for k, g := range groups {
				wg.Go(func() { errs[k] = c.enqueueGroup(ctx, queue, g, results, done) })
			}
			wg.Wait()
		}
		retired := false
		for _, err := range errs {
			if errors.Is(err, store.ErrRetired) && attempt == 0 {
				c.layouts.Delete(queue)
				retired = true
				continue
			}
			if err != nil {
				return err
			}
		}
		if !retired {
			return nil
		}
	}
}

// placeID gives a job with a unique key and a generated id, on a queue of
// several partitions, an id of the same partition as its key, so that Get
// and Cancel find it in one call.
func (c *Client) placeID(spec *JobSpec, job *store.NewJob, l store.Layout, now time.Time) {
	if l.Partitions <= 1 || spec.ID != "" || job.Unique.Key == "" {
		return
	}
	want := store.PartitionOf(job.Unique.Key, l.Partitions)
	for store.PartitionOf(job.ID, l.Partitions) != want {
		job.ID = c.ids.next(now)
	}
}

// durabilityOf is the Durability a spec asks for: its own, else the
// Client's default for its queue.
func (c *Client) durabilityOf(spec *JobSpec) Durability {
	if spec.Durability != (Durability{}) {
		return spec.Durability
	}
	return c.cfg.Durability[spec.Queue]
}

// enqueueGroup writes one group's jobs and fills their results. Jobs
// stored but not confirmed on replicas get the *NotReplicatedError.
func (c *Client) enqueueGroup(ctx context.Context, queue string, g *enqueueGroup, results []EnqueueResult, done []bool) error {
	added, err := c.enqueueTo(ctx, queue, g.partition, g.jobs, g.durability)
	var unconfirmed error
	if errors.Is(err, ErrNotReplicated) {
		unconfirmed, err = err, nil
	}
	if err != nil {
		if errors.Is(err, store.ErrRetired) && len(added) == 0 {
			return err
		}
		return enqueueError(queue, len(g.jobs), len(added), err)
	}
	n, byID, byKey := 0, 0, 0
	for k, a := range added {
		i := g.index[k]
		done[i] = true
		switch {
		case a.Added:
			n++
			results[i].Err = unconfirmed
		case a.Holder != "":
			results[i].Err = fmt.Errorf("queue %q: unique key %q is held by job %q: %w", queue, g.jobs[k].Unique.Key, a.Holder, ErrUniqueKeyHeld)
			results[i].ID = a.Holder
			byKey++
		default:
			results[i].Err = fmt.Errorf("queue %q job %q: %w", queue, results[i].ID, ErrDuplicate)
			byID++
		}
	}
	c.metrics.Duplicates(queue, metrics.DuplicateID, byID)
	c.metrics.Duplicates(queue, metrics.DuplicateUnique, byKey)
	c.metrics.Enqueued(queue, n)
	return nil
}

// enqueueError is the error of an enqueue of jobs jobs to queue that
// failed after the first handled of them were handled (the batches before
// the failed one). A batch refused out of memory stored nothing.
func enqueueError(queue string, jobs, handled int, err error) error {
	switch {
	case !errors.Is(err, store.ErrOOM):
		return fmt.Errorf("enqueue to queue %q: %w", queue, err)
	case handled == 0 && jobs <= store.MaxBatch:
		return fmt.Errorf("enqueue to queue %q refused, nothing stored: %w: %w", queue, ErrRedisOOM, err)
	}
	return fmt.Errorf("enqueue to queue %q refused from job %d on: %w: %w", queue, handled+1, ErrRedisOOM, err)
}

// newJob validates spec and turns it into a store job, generating its id.
func (c *Client) newJob(spec *JobSpec, now time.Time) (store.NewJob, error) {
	if err := ValidateQueueName(spec.Queue); err != nil {
		return store.NewJob{}, err
	}
	id := spec.ID
	if id == "" {
		id = c.ids.next(now)
	} else if err := ValidateID(id); err != nil {
		return store.NewJob{}, err
	}
	horizon := c.cfg.MaxScheduleAhead
	switch {
	case len(spec.Payload) > c.cfg.MaxPayloadBytes:
		return store.NewJob{}, invalid("Payload", "is %d bytes; the limit is %d", len(spec.Payload), c.cfg.MaxPayloadBytes)
	case spec.Delay < 0:
		return store.NewJob{}, invalid("Delay", "must not be negative (got %s)", spec.Delay)
	case spec.Delay > horizon:
		return store.NewJob{}, invalid("Delay", "%s is beyond the scheduling horizon of %s", spec.Delay, horizon)
	case !spec.RunAt.IsZero() && spec.Delay != 0:
		return store.NewJob{}, invalid("RunAt", "set delay or run_at, not both")
	case !spec.RunAt.IsZero() && spec.RunAt.UnixMilli() < 0:
		return store.NewJob{}, invalid("RunAt", "%s is before 1970", spec.RunAt.Format(time.RFC3339))
	case spec.RunAt.After(now.Add(horizon)):
		return store.NewJob{}, invalid("RunAt", "%s is beyond the scheduling horizon of %s", spec.RunAt.Format(time.RFC3339), horizon)
	case spec.MaxAttempts < 0:
		return store.NewJob{}, invalid("MaxAttempts", "must be at least 1, or 0 for the queue's default (got %d)", spec.MaxAttempts)
	case spec.Timeout < 0:
		return store.NewJob{}, invalid("Timeout", "must not be negative (got %s)", spec.Timeout)
	case spec.Timeout > 0 && spec.Timeout < time.Millisecond:
		return store.NewJob{}, invalid("Timeout", "must be at least 1ms (got %s)", spec.Timeout)
	}
	if err := spec.Priority.validate(); err != nil {
		return store.NewJob{}, err
	}
	if err := validateUnique(spec); err != nil {
		return store.NewJob{}, err
	}
	if err := spec.Durability.validate("Durability"); err != nil {
		return store.NewJob{}, err
	}
	return store.NewJob{
		ID:          id,
		At:          spec.RunAt,
		Delay:       spec.Delay,
		MaxAttempts: spec.MaxAttempts,
		Timeout:     spec.Timeout,
		Payload:     spec.Payload,
		Priority:    store.Priority(spec.Priority),
		Unique:      store.Unique{Key: spec.UniqueKey, For: spec.UniqueFor.Truncate(time.Millisecond), AfterFinish: spec.UniqueAfterFinish},
		CallerID:    spec.ID != "",
	}, nil
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
	if err := c.st.AddQueues(ctx, fresh...); err != nil {
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
	err := c.findJob(ctx, queue, id, func(partition string) (bool, error) {
		var err error
		snap, err = c.st.Get(ctx, partition, id)
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
	default:
		return nil, fmt.Errorf("queue %q job %q: record is in no set (inconsistent data)", queue, id)
	}
	return job, nil
}

// Cancel cancels a job. One that has not started is deleted. A running one
// ends: it goes to the dead set with the last error "cancelled" (requeue it
// to run it again), and the handler running it, on whichever process of
// the fleet, sees its context end with cause ErrCancelled — within
// milliseconds through the queue's wake channel, or at the process's next
// lease extension (Config.Lease/3) if that message is lost; what the
// handler returns then is ignored. It returns an error wrapping ErrNotFound
// or ErrJobDead (a dead job is left as it is) when there is nothing to
// cancel.
func (c *Client) Cancel(ctx context.Context, queue, id string) error {
	if err := validateRef(queue, id); err != nil {
		return err
	}
	var res store.CancelResult
	err := c.findJob(ctx, queue, id, func(partition string) (bool, error) {
		var err error
		res, err = c.st.Cancel(ctx, partition, id)
		return err == nil && res != store.CancelNotFound, err
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	switch res {
	case store.Cancelled, store.CancelRunning:
		return nil
	case store.CancelDead:
		return fmt.Errorf("cancel queue %q job %q: %w", queue, id, ErrJobDead)
	}
	return fmt.Errorf("cancel queue %q job %q: %w", queue, id, ErrNotFound)
}

// Requeue moves dead jobs back to due now, with their attempts reset and
// their last error kept. It returns how many moved; ids that were not dead
// are skipped.
func (c *Client) Requeue(ctx context.Context, queue string, ids ...string) (int, error) {
	if err := ValidateQueueName(queue); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return 0, err
		}
	}
	return c.acrossPartitions(ctx, queue, ids, func(partition string, ids []string) ([]bool, error) {
		return c.st.Requeue(ctx, partition, ids)
	})
}

// QueueStats counts a queue's jobs by state and says whether it is paused.
type QueueStats struct {
	Scheduled int64
	Ready     int64
	Active    int64
	Dead      int64
	// Paused reports that the queue is paused (Client.Pause): no process
	// claims its jobs until Client.Resume.
	Paused bool
}

// Stats counts the jobs of queue by state and reads its pause flag.
func (c *Client) Stats(ctx context.Context, queue string) (QueueStats, error) {
	if err := ValidateQueueName(queue); err != nil {
		return QueueStats{}, err
	}
	s, err := c.stats(ctx, queue)
	if err != nil {
		return QueueStats{}, err
	}
	return QueueStats{Scheduled: s.Scheduled, Ready: s.Ready, Active: s.Active, Dead: s.Dead, Paused: s.Paused}, nil
}

// Queues lists the queues that were ever enqueued to or served.
func (c *Client) Queues(ctx context.Context) ([]string, error) { return c.st.Queues(ctx) }

func validateRef(queue, id string) error {
	if err := ValidateQueueName(queue); err != nil {
		return err
	}
	return ValidateID(id)
}

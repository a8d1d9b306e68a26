package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// EnqueueMany adds jobs, up to 1,000 per script call and all calls in one
// round trip per queue. If any spec is invalid nothing is written and the
// error names the spec and field. Otherwise each result says whether its job
// was added or its id existed (ErrDuplicate, also for an id repeated within
// jobs). On a Redis error some jobs may have been added; the results then
// still carry every job's id (generated ones included) and no Err: enqueue
// the specs again with those ids to retry safely. When Redis is out of
// memory the error wraps ErrRedisOOM and says which jobs were stored.
// The Client's hooks (Use) run first, on a copy of specs.
func (c *Client) EnqueueMany(ctx context.Context, specs []JobSpec) ([]EnqueueResult, error) {
	specs, err := c.runHooks(ctx, specs)
	if err != nil {
		return nil, err
	}
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
	if c.cfg.RefuseUnserved {
		if err := c.refuseUnserved(ctx, specs); err != nil {
			return nil, err
		}
	}
	ctx, sent := c.tracer.send(ctx, specs, jobs)
	err = c.enqueueAll(ctx, queues, specs, jobs, results, now)
	sent(results, err)
	return results, err
}

// refuseUnserved refuses specs when one is of a queue or kind no daemon
// has ever served (Config.RefuseUnserved), naming the first such spec.
func (c *Client) refuseUnserved(ctx context.Context, specs []JobSpec) error {
	queues, kinds := make([]string, len(specs)), make([]string, len(specs))
	for i := range specs {
		queues[i], kinds[i] = specs[i].Queue, specs[i].Kind
	}
	warnings, err := c.core.Served.Check(ctx, queues, kinds)
	if err != nil {
		return fmt.Errorf("enqueue refused, nothing stored: check the queues were served (Config.RefuseUnserved): %w", err)
	}
	for i, w := range warnings {
		if w == "" {
			continue
		}
		if len(specs) > 1 {
			w = fmt.Sprintf("specs[%d]: %s", i, w)
		}
		return fmt.Errorf("%w: %s; nothing stored", ErrUnserved, w)
	}
	return nil
}

// enqueueAll writes validated jobs, queue by queue, and fills their results.
func (c *Client) enqueueAll(ctx context.Context, queues []string, specs []JobSpec, jobs []store.NewJob, results []EnqueueResult, now time.Time) error {
	if err := c.recordQueues(ctx, queues); err != nil {
		if errors.Is(err, store.ErrOOM) {
			return fmt.Errorf("enqueue refused, nothing stored: %w: %w", ErrRedisOOM, err)
		}
		return err
	}
	done := make([]bool, len(specs))
	for _, q := range queues {
		if err := c.enqueueQueue(ctx, q, specs, jobs, results, done, now); err != nil {
			return err
		}
	}
	return nil
}

// enqueueGroup is the jobs of one queue that go to one partition with one
// Durability: one pipeline.
type enqueueGroup struct {
	to         store.Target
	durability Durability
	index      []int // into the specs
	jobs       []store.NewJob
}

// maxReroutes bounds how often the jobs of one call are routed again by a
// newer layout before they go to partition 0 unchecked.
const maxReroutes = 3

// enqueueQueue writes the jobs of specs that go to queue, partition by
// partition, routed by the layout the Client last learned, and fills their
// results. A partition that refuses the routing (the layout changed) wrote
// nothing: its jobs are routed again by what the refusal taught
// (queue.Layer.Refused), and go to partition 0 when nothing newer is known,
// so a layout change never refuses a job.
func (c *Client) enqueueQueue(ctx context.Context, queue string, specs []JobSpec, jobs []store.NewJob, results []EnqueueResult, done []bool, now time.Time) error {
	l, err := c.core.Layer.Route(ctx, queue)
	if err != nil {
		return err
	}
	fallback := false
	for attempt := 0; ; attempt++ {
		groups := c.groups(queue, l, fallback, specs, jobs, results, done, now)
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
		var refused error
		for _, err := range errs {
			switch {
			case store.IsRefusal(err):
				refused = err
			case err != nil:
				return err
			}
		}
		if refused == nil {
			return nil
		}
		next, back, err := c.core.Layer.Refused(ctx, queue, l, refused)
		if err != nil {
			return err
		}
		l, fallback = next, back || attempt+1 >= maxReroutes
	}
}

// groups sorts the jobs of specs that go to queue and are not done into
// one group per partition and Durability, routed by l; with fallback, all
// to partition 0, unchecked.
func (c *Client) groups(queue string, l store.Layout, fallback bool, specs []JobSpec, jobs []store.NewJob, results []EnqueueResult, done []bool, now time.Time) []*enqueueGroup {
	var groups []*enqueueGroup
	for i := range specs {
		if specs[i].Queue != queue || done[i] {
			continue
		}
		to := store.Target{Partition: queue, Version: -1}
		if !fallback {
			c.placeID(&specs[i], &jobs[i], l, now)
			results[i].ID = jobs[i].ID
			to = store.Target{Partition: l.Home(queue, homeKey(&jobs[i])), Version: l.Version}
		}
		dur := c.durabilityOf(&specs[i])
		var g *enqueueGroup
		for _, o := range groups {
			if o.to == to && o.durability == dur {
				g = o
				break
			}
		}
		if g == nil {
			// Most calls make one group: room for every job up front
			// saves growing the slices job by job.
			g = &enqueueGroup{to: to, durability: dur,
				index: make([]int, 0, len(specs)-i), jobs: make([]store.NewJob, 0, len(specs)-i)}
			groups = append(groups, g)
		}
		g.index = append(g.index, i)
		g.jobs = append(g.jobs, jobs[i])
	}
	return groups
}

// placeID gives a job with a key or a unique key and a generated id, on a
// queue of several partitions, an id of the same partition as that key
// (homeKey), so that Get and Cancel find it in one call.
func (c *Client) placeID(spec *JobSpec, job *store.NewJob, l store.Layout, now time.Time) {
	if l.Partitions <= 1 || spec.ID != "" || homeKey(job) == job.ID {
		return
	}
	want := store.PartitionOf(homeKey(job), l.Partitions)
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
	added, err := c.enqueueTo(ctx, queue, g.to, g.jobs, g.durability)
	var unconfirmed error
	if errors.Is(err, ErrNotReplicated) {
		unconfirmed, err = err, nil
	}
	if err != nil {
		if store.IsRefusal(err) && len(added) == 0 {
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
	if err := validateSpec(spec, c.cfg.MaxPayloadBytes, c.cfg.MaxScheduleAhead, now); err != nil {
		return store.NewJob{}, err
	}
	id := spec.ID
	if id == "" {
		id = c.ids.next(now)
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
		Key:         spec.Key,
		CallerID:    spec.ID != "",
		Headers:     core.WithKind(spec.Headers, spec.Kind),
	}, nil
}

// Validate checks spec against every rule EnqueueMany applies, writing
// nothing: for tools that write jobs by other means (admin.Client.Import).
func (c *Client) Validate(spec JobSpec) error {
	return validateSpec(&spec, c.cfg.MaxPayloadBytes, c.cfg.MaxScheduleAhead, time.Now())
}

// homeKey is what places a job among a queue's partitions: its key (all of
// a key's jobs share a partition, where its cap and share are kept), else
// its unique key, else its id.
func homeKey(j *store.NewJob) string { return cmp.Or(j.Key, j.Unique.Key, j.ID) }

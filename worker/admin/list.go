package admin

import (
	"cmp"
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Bounds of JobListParams.Limit.
const (
	// ListLimitDefault is the page size of Jobs when none is asked.
	ListLimitDefault = 100
	// ListLimitMax is the most jobs a page of Jobs holds.
	ListLimitMax = 1000
)

// maxErrorContains is the longest DeadFilter.ErrorContains, in bytes.
const maxErrorContains = store.MaxErrorFilter

// listCalls bounds the script calls of one Jobs of dead jobs with an error
// filter, each of which examines up to 250 jobs (so that none holds Redis
// for much more than a millisecond): 10,000 jobs a page at most.
const listCalls = 40

// JobListParams selects a page of a queue's jobs in one state (Jobs), for
// tools that show jobs: the CLI, the HTTP API, the web UI.
type JobListParams struct {
	// Queue is the queue listed. Required.
	Queue string
	// State is the state listed: worker.StateScheduled, worker.StateReady,
	// worker.StateActive, worker.StateDead, worker.StateCompleted or
	// worker.StateCancelled. Required.
	State worker.State
	// Cursor is a previous JobPage.Next of the same queue and state; ""
	// starts at the beginning. A cursor of another state is refused.
	Cursor string
	// Limit is the most jobs on the page, 1 to ListLimitMax. Default
	// ListLimitDefault.
	Limit int
	// Dead filters the dead jobs, or the cancelled ones (their cancel
	// time read as time of death); only with worker.StateDead or
	// worker.StateCancelled. The zero filter lists every one.
	Dead DeadFilter
}

// DeadFilter selects dead (or cancelled) jobs, for a listing
// (JobListParams.Dead) and a triage (TriageParams.Filter). The zero value
// selects every one.
type DeadFilter struct {
	// ErrorContains keeps the jobs whose last error contains it, with ASCII
	// letters compared without regard to case; "" = any. At most 256 bytes.
	ErrorContains string
	// DiedAfter keeps the jobs that died after it; zero = no bound.
	DiedAfter time.Time
	// DiedBefore keeps the jobs that died before it; zero = no bound.
	DiedBefore time.Time
}

// IsZero reports whether f selects every dead job.
func (f DeadFilter) IsZero() bool { return f == DeadFilter{} }

// validate checks f, naming its fields under field.
func (f DeadFilter) validate(field string) error {
	epoch := time.UnixMilli(0)
	switch {
	case len(f.ErrorContains) > maxErrorContains:
		return invalid(field+".ErrorContains", "must be at most %d bytes (got %d)", maxErrorContains, len(f.ErrorContains))
	case !f.DiedAfter.IsZero() && f.DiedAfter.Before(epoch):
		return invalid(field+".DiedAfter", "must be zero or after 1970 (got %v)", f.DiedAfter)
	case !f.DiedBefore.IsZero() && !f.DiedBefore.After(epoch):
		return invalid(field+".DiedBefore", "must be zero or after 1970 (got %v)", f.DiedBefore)
	case !f.DiedAfter.IsZero() && !f.DiedBefore.IsZero() && !f.DiedBefore.After(f.DiedAfter):
		return invalid(field+".DiedBefore", "must be after DiedAfter (got %v, DiedAfter %v)", f.DiedBefore, f.DiedAfter)
	}
	return nil
}

// toStore returns f for the dead list script, whose times are whole ms: a
// death (whole ms) is after DiedAfter when it is after DiedAfter's ms
// (rounded down), and before DiedBefore when it is at or before the ms
// just under DiedBefore (rounded up).
func (f DeadFilter) toStore() store.DeadFilter {
	out := store.DeadFilter{ErrorContains: f.ErrorContains, After: f.DiedAfter}
	if !f.DiedBefore.IsZero() {
		ms := f.DiedBefore.UnixMilli()
		if f.DiedBefore.After(time.UnixMilli(ms)) {
			ms++
		}
		out.AtOrBefore = time.UnixMilli(ms - 1)
	}
	return out
}

// JobPage is one page of jobs (Jobs).
type JobPage struct {
	// Jobs are in the state listed, with what Get reads: RunAt for
	// scheduled and ready jobs; LeaseUntil, StartedAt and Worker for active
	// ones, and their running attempt in Attempt; DiedAt for dead ones;
	// Result and FinishedAt for completed ones. A
	// job whose record cannot be read is listed with its ID, State and the
	// reason in LastError, so that it can be seen (and, dead, purged).
	Jobs []*worker.Job
	// Next is the cursor of the next page; "" when this page reached the
	// end. A page can hold fewer jobs than the limit, none even, and still
	// have a Next: when its records pass 16 MiB, and with an error filter
	// that matched few of the dead jobs examined.
	Next string
}

// Jobs reads a page of the jobs of a queue in one state. Each call is
// bounded, whatever the queue's size: it examines at most about Limit jobs
// (at most 10,000 with a DeadFilter.ErrorContains, which loops until the
// page is full or 40 script calls of 250 jobs have run) and reads at most 16 MiB of
// records. Orders, and what a cursor promises:
//
//   - worker.StateReady: the jobs due at or before the Redis clock's now, in the
//     order a claim under strict priority takes them: high priority first,
//     then normal, then low, each by run-at, then id.
//   - worker.StateScheduled: the jobs due later, by run-at, then id, across the
//     priority levels.
//   - worker.StateActive: the running jobs, by lease deadline, then id.
//   - worker.StateDead: by time of death, then id, filtered by Dead.
//   - worker.StateCompleted: the finished jobs the queue retains
//     (worker.QueueOptions.RetainCompleted), newest first: by finish time, then
//     id, both descending. A job that completes while the pages are read
//     comes before the cursor and is not listed; one the leader trims
//     meanwhile is not listed either.
//   - worker.StateCancelled: the cancelled jobs, by cancel time (oldest
//     first, in Job.FinishedAt), then id, filtered by Dead, as the dead.
//
// A queue of several partitions is listed one partition after another,
// each in that order.
//
// A page starts right after the previous page's last job (or, with an error
// filter, the last dead job it examined), whether or not that job is still
// there: a job that stays in its state, in the same place, is listed
// exactly once across the pages. A job that enters the state, or moves, is
// listed once if it lands after the cursor: a job becoming due is listed as
// ready only if it lands after the cursor, and a running job whose lease is
// renewed after it was listed can be listed again (renewals move its
// deadline later; no job is skipped by them).
//
// Bad arguments are a *worker.ValidationError naming "Queue", "State",
// "Limit", "Cursor"
// (not a cursor of the same state's pages), "Dead" (a filter with another
// state) or a field of Dead.
func (c *Client) Jobs(ctx context.Context, q JobListParams) (JobPage, error) {
	queue := q.Queue
	if err := worker.ValidateQueueName(queue); err != nil {
		return JobPage{}, err
	}
	switch q.State {
	case worker.StateScheduled, worker.StateReady, worker.StateActive, worker.StateDead, worker.StateCompleted, worker.StateCancelled:
	default:
		return JobPage{}, invalid("State", "must be %q, %q, %q, %q, %q or %q (got %q)", worker.StateScheduled, worker.StateReady, worker.StateActive, worker.StateDead, worker.StateCompleted, worker.StateCancelled, q.State)
	}
	limit := cmp.Or(q.Limit, ListLimitDefault)
	if limit < 1 || limit > ListLimitMax {
		return JobPage{}, invalid("Limit", "must be 1 to %d, or 0 for %d (got %d)", ListLimitMax, ListLimitDefault, q.Limit)
	}
	if _, kept := triaged(q.State); (!kept || q.State == "") && !q.Dead.IsZero() {
		return JobPage{}, invalid("Dead", "filters dead and cancelled jobs only (State %q)", q.State)
	}
	if err := q.Dead.validate("Dead"); err != nil {
		return JobPage{}, err
	}
	parts, err := c.core.Layer.Partitions(ctx, queue)
	if err != nil {
		return JobPage{}, err
	}
	if len(parts) == 1 {
		return c.listPartition(ctx, queue, queue, q, limit)
	}
	// Several partitions: their pages one partition after another, the
	// cursor saying which partition and where in it.
	i, inner, err := parsePartitionCursor(q.Cursor, len(parts))
	if err != nil {
		return JobPage{}, err
	}
	var out JobPage
	for ; i < len(parts); i++ {
		q.Cursor, q.Limit = inner, limit-len(out.Jobs)
		page, err := c.listPartition(ctx, queue, parts[i], q, q.Limit)
		if err != nil {
			return JobPage{}, err
		}
		out.Jobs = append(out.Jobs, page.Jobs...)
		if page.Next != "" {
			out.Next = partitionIndexCursor(i, page.Next)
			return out, nil
		}
		inner = ""
		if len(out.Jobs) >= limit {
			if i+1 < len(parts) {
				out.Next = partitionIndexCursor(i+1, "")
			}
			return out, nil
		}
	}
	return out, nil
}

// listPartition reads a page of one partition of queue (the queue itself
// when it has one), as Jobs describes.
func (c *Client) listPartition(ctx context.Context, queue, partition string, q JobListParams, limit int) (JobPage, error) {
	cur, err := parseListCursor(q.State, q.Cursor)
	if err != nil {
		return JobPage{}, err
	}
	if set, kept := triaged(q.State); kept {
		return c.listDead(ctx, queue, partition, q.State, set, q.Dead, store.DeadCursor{DiedAt: cur.at, ID: cur.id}, limit)
	}
	what := store.ListActive
	switch q.State {
	case worker.StateReady:
		what = store.ListReady
	case worker.StateScheduled:
		what = store.ListScheduled
	case worker.StateCompleted:
		what = store.ListCompleted
	}
	page, err := c.core.St.List(ctx, partition, store.ListQuery{What: what, After: store.ListCursor{Level: cur.level, Score: cur.at, ID: cur.id}, Limit: limit})
	if err != nil {
		return JobPage{}, err
	}
	out := JobPage{Jobs: make([]*worker.Job, len(page.Jobs))}
	for i := range page.Jobs {
		lj := &page.Jobs[i]
		job := listedJob(queue, q.State, &lj.Record, lj.Err)
		switch q.State {
		case worker.StateActive:
			job.LeaseUntil = lj.Score
		case worker.StateCompleted:
			job.FinishedAt = lj.Score
		default:
			job.RunAt = lj.Score
		}
		out.Jobs[i] = job
	}
	if n := page.Next; !n.IsZero() {
		out.Next = formatListCursor(q.State, listCursor{level: n.Level, at: n.Score, id: n.ID})
	}
	return out, nil
}

// listDead reads a page of the dead (or cancelled: state and set) jobs of
// a partition of queue after the position after, looping while an error
// filter leaves it short, within listCalls script calls and 16 MiB of
// records.
func (c *Client) listDead(ctx context.Context, queue, partition string, state worker.State, set store.Set, f DeadFilter, after store.DeadCursor, limit int) (JobPage, error) {
	out := JobPage{Jobs: make([]*worker.Job, 0, min(limit, ListLimitDefault))}
	bytes := 0
	for range listCalls {
		page, err := c.core.St.Dead(ctx, partition, store.DeadQuery{
			Set: set, After: after, Limit: limit - len(out.Jobs), Filter: f.toStore(), MaxBytes: max(store.DeadPageBytes-bytes, 1),
		})
		if err != nil {
			return JobPage{}, err
		}
		for i := range page.Jobs {
			dj := &page.Jobs[i]
			job := listedJob(queue, state, &dj.Record, dj.Err)
			if state == worker.StateCancelled {
				job.FinishedAt = dj.DiedAt
			} else {
				job.DiedAt = dj.DiedAt
			}
			bytes += len(job.Payload) + len(job.LastError)
			out.Jobs = append(out.Jobs, job)
		}
		if page.Next.IsZero() {
			return out, nil
		}
		after = page.Next
		if f.ErrorContains == "" || len(out.Jobs) >= limit || bytes >= store.DeadPageBytes {
			break
		}
	}
	out.Next = formatListCursor(state, listCursor{at: after.DiedAt, id: after.ID})
	return out, nil
}

// listedJob returns the Job of a listed record in state; err, when set,
// says why the record could not be read.
func listedJob(queue string, state worker.State, r *store.Record, err error) *worker.Job {
	job := jobOf(queue, r)
	job.State = state
	if err != nil {
		job.LastError = err.Error()
	}
	return job
}

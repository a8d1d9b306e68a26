package worker

import (
	"context"
	"time"
)

// Bounds of DeadQuery.Limit, the same as ListQuery's.
const (
	DeadLimitDefault = ListLimitDefault
	DeadLimitMax     = ListLimitMax
)

// DeadQuery selects a page of a queue's dead set, oldest death first. It is
// List's ListQuery with StateDead and no filter, kept for compatibility.
type DeadQuery struct {
	// Cursor is a previous DeadPage.Next (or JobPage.Next of dead jobs); ""
	// starts at the beginning.
	Cursor string
	// Limit is the most jobs on the page, 1 to 1000. Default 100.
	Limit int
}

// DeadPage is one page of dead jobs: List's JobPage.
type DeadPage struct {
	// Jobs are in State dead, with DiedAt, Attempt, MaxAttempts, Timeout,
	// LastError, Payload, EnqueuedAt, Priority and the unique key set. A job
	// whose record cannot be read is listed with its ID and DiedAt only and
	// the reason in LastError, so that it can be purged. A page holds fewer
	// than Limit jobs when their records pass 16 MiB; Next is set then.
	Jobs []*Job
	// Next is the cursor of the next page; "" when this page reached the
	// end. The next page starts right after this page's last job, in the
	// set's order (time of death, then id bytes), whether or not that job
	// is still dead: a job dead all along is listed exactly once.
	Next string
}

// Dead reads a page of the dead set of queue: List with StateDead. A bad
// limit or cursor is a *ValidationError naming "Limit" or "Cursor".
func (c *Client) Dead(ctx context.Context, queue string, q DeadQuery) (DeadPage, error) {
	page, err := c.List(ctx, queue, ListQuery{State: StateDead, Cursor: q.Cursor, Limit: q.Limit})
	return DeadPage(page), err
}

// RequeueAll moves every job that is dead when it starts back to due now,
// with their attempts reset and their last errors kept, 1,000 per script
// call: RequeueDead of every dead job. Jobs that die after it starts (from
// the next millisecond on) are left dead, so it ends even while requeued
// jobs keep failing. It returns how many moved; on an error, how many
// moved before it.
func (c *Client) RequeueAll(ctx context.Context, queue string) (int, error) {
	res, err := c.RequeueDead(ctx, queue, DeadSelection{}, TriageOptions{})
	return res.Changed, err
}

// Purge deletes dead jobs of queue by id. Ids not in the dead set are
// skipped and not counted: a job that is due or active is never deleted.
// It returns how many were deleted.
func (c *Client) Purge(ctx context.Context, queue string, ids ...string) (int, error) {
	if err := ValidateQueueName(queue); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return 0, err
		}
	}
	return c.acrossPartitions(ctx, queue, ids, func(partition string, ids []string) ([]bool, error) {
		return c.st.Purge(ctx, partition, ids, time.Time{})
	})
}

// PurgeAll deletes every job that is dead when it starts, 1,000 per script
// call: PurgeDead of every dead job. Jobs that die after it starts (from
// the next millisecond on) are kept. It returns how many were deleted; on
// an error, how many were deleted before it.
func (c *Client) PurgeAll(ctx context.Context, queue string) (int, error) {
	res, err := c.PurgeDead(ctx, queue, DeadSelection{}, TriageOptions{})
	return res.Changed, err
}

// count returns how many flags are set.
func count(flags []bool) int {
	n := 0
	for _, ok := range flags {
		if ok {
			n++
		}
	}
	return n
}

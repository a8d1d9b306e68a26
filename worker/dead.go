package worker

import (
	"cmp"
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Bounds of DeadQuery.Limit.
const (
	DeadLimitDefault = 100
	DeadLimitMax     = 1000
)

// DeadQuery selects a page of a queue's dead set, oldest death first.
type DeadQuery struct {
	// Cursor is a previous DeadPage.Next; "" starts at the beginning.
	Cursor string
	// Limit is the most jobs on the page, 1 to 1000. Default 100.
	Limit int
}

// DeadPage is one page of dead jobs.
type DeadPage struct {
	// Jobs are in State dead, with DiedAt, Attempt, MaxAttempts, Timeout,
	// LastError, Payload and EnqueuedAt set. A job whose record cannot be
	// read is listed with its ID and DiedAt only and the reason in
	// LastError, so that it can be purged. A page holds fewer than Limit
	// jobs when their records pass 16 MiB; Next is set then.
	Jobs []*Job
	// Next is the cursor of the next page; "" when this page reached the
	// end. The next page starts right after this page's last job, in the
	// set's order (time of death, then id bytes), whether or not that job
	// is still dead: a job dead all along is listed exactly once.
	Next string
}

// Dead reads a page of the dead set of queue. A bad limit or cursor is a
// *ValidationError naming "Limit" or "Cursor".
func (c *Client) Dead(ctx context.Context, queue string, q DeadQuery) (DeadPage, error) {
	if err := ValidateQueueName(queue); err != nil {
		return DeadPage{}, err
	}
	limit := cmp.Or(q.Limit, DeadLimitDefault)
	if limit < 1 || limit > DeadLimitMax {
		return DeadPage{}, invalid("Limit", "must be 1 to %d, or 0 for %d (got %d)", DeadLimitMax, DeadLimitDefault, q.Limit)
	}
	after, err := parseDeadCursor(q.Cursor)
	if err != nil {
		return DeadPage{}, err
	}
	page, err := c.st.Dead(ctx, queue, store.DeadQuery{After: after, Limit: limit})
	if err != nil {
		return DeadPage{}, err
	}
	out := DeadPage{Jobs: make([]*Job, len(page.Jobs))}
	for i := range page.Jobs {
		dj := &page.Jobs[i]
		job := jobFromRecord(queue, &dj.Record)
		job.State, job.DiedAt = StateDead, dj.DiedAt
		if dj.Err != nil {
			job.LastError = dj.Err.Error()
		}
		out.Jobs[i] = job
	}
	if !page.Next.IsZero() {
		out.Next = formatDeadCursor(page.Next)
	}
	return out, nil
}

// RequeueAll moves every job that is dead when it starts back to due now,
// with their attempts reset and their last errors kept, 1,000 per script
// call. Jobs that die after it starts (from the next millisecond on) are
// left dead, so it ends even while requeued jobs keep failing. It returns
// how many moved; on an error, how many moved before it.
func (c *Client) RequeueAll(ctx context.Context, queue string) (int, error) {
	return c.eachDead(ctx, queue, func(ids []string, _ time.Time) ([]bool, error) {
		return c.st.Requeue(ctx, queue, ids)
	})
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
	deleted, err := c.st.Purge(ctx, queue, ids, time.Time{})
	return count(deleted), err
}

// PurgeAll deletes every job that is dead when it starts, 1,000 per script
// call; jobs that die after it starts (from the next millisecond on) are
// kept. It returns how many were deleted; on an error, how many were
// deleted before it.
func (c *Client) PurgeAll(ctx context.Context, queue string) (int, error) {
	return c.eachDead(ctx, queue, func(ids []string, until time.Time) ([]bool, error) {
		return c.st.Purge(ctx, queue, ids, until)
	})
}

// eachDead walks the dead set of queue as it is when the walk starts, by
// the Redis clock: it hands f the ids of up to 1,000 jobs at a time with the
// walk's bound, and counts the ids f reports done. Each page starts after
// the last one, so jobs that f leaves in the set are not seen twice, and
// jobs that die during the walk lie beyond the bound.
func (c *Client) eachDead(ctx context.Context, queue string, f func(ids []string, until time.Time) ([]bool, error)) (int, error) {
	if err := ValidateQueueName(queue); err != nil {
		return 0, err
	}
	q := store.DeadQuery{Limit: store.MaxBatch, IDsOnly: true, UntilNow: true}
	done := 0
	for {
		page, err := c.st.Dead(ctx, queue, q)
		if err != nil {
			return done, err
		}
		if q.UntilNow {
			q.UntilNow, q.Until = false, page.Now
		}
		if len(page.Jobs) > 0 {
			ids := make([]string, len(page.Jobs))
			for i, j := range page.Jobs {
				ids[i] = j.Record.ID
			}
			flags, err := f(ids, q.Until)
			done += count(flags)
			if err != nil {
				return done, err
			}
		}
		if page.Next.IsZero() {
			return done, nil
		}
		q.After = page.Next
	}
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

// maxDeadCursorLen bounds a cursor's text: 15 digits, ':' and a 256-byte
// id, in unpadded base64.
const maxDeadCursorLen = (4*(15+1+MaxIDLen) + 2) / 3

// formatDeadCursor encodes a position as base64url of "<ms>:<id>": opaque
// to users and safe in a URL query without escaping.
func formatDeadCursor(c store.DeadCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.DiedAt.UnixMilli(), 10) + ":" + c.ID))
}

// parseDeadCursor is the inverse of formatDeadCursor; "" is the start.
func parseDeadCursor(s string) (store.DeadCursor, error) {
	if s == "" {
		return store.DeadCursor{}, nil
	}
	bad := invalid("Cursor", "is not a cursor from a previous page of dead jobs")
	if len(s) > maxDeadCursorLen {
		return store.DeadCursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.DeadCursor{}, bad
	}
	ms, id, ok := strings.Cut(string(raw), ":")
	if !ok || ms == "" || len(ms) > 15 || strings.Trim(ms, "0123456789") != "" || ValidateID(id) != nil {
		return store.DeadCursor{}, bad
	}
	n, _ := strconv.ParseInt(ms, 10, 64) // 15 digits always fit
	return store.DeadCursor{DiedAt: time.UnixMilli(n), ID: id}, nil
}

package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// Dead reads a page of the dead set of queue.
func (c *Client) Dead(ctx context.Context, queue string, q worker.DeadQuery) (worker.DeadPage, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return worker.DeadPage{}, err
	}
	params := url.Values{}
	if q.Cursor != "" {
		params.Set("cursor", q.Cursor)
	}
	if q.Limit != 0 {
		params.Set("limit", strconv.Itoa(q.Limit))
	}
	path := queuePath(queue) + "/dead"
	if len(params) > 0 {
		path += "?" + params.Encode()
	}
	jobs, next, err := c.page(ctx, path)
	return worker.DeadPage{Jobs: jobs, Next: next}, err
}

// List reads a page of the jobs of queue in one state, as
// worker.Client.List does, through GET /v1/queues/{queue}/jobs.
func (c *Client) List(ctx context.Context, queue string, q worker.ListQuery) (worker.JobPage, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return worker.JobPage{}, err
	}
	params := url.Values{}
	params.Set("state", string(q.State))
	if q.Cursor != "" {
		params.Set("cursor", q.Cursor)
	}
	if q.Limit != 0 {
		params.Set("limit", strconv.Itoa(q.Limit))
	}
	if f := q.Dead; !f.IsZero() {
		if f.ErrorContains != "" {
			params.Set("error", f.ErrorContains)
		}
		if !f.DiedAfter.IsZero() {
			params.Set("died_after", timeParam(f.DiedAfter))
		}
		if !f.DiedBefore.IsZero() {
			params.Set("died_before", timeParam(f.DiedBefore))
		}
	}
	jobs, next, err := c.page(ctx, queuePath(queue)+"/jobs?"+params.Encode())
	return worker.JobPage{Jobs: jobs, Next: next}, err
}

// timeParam is t as the API reads times; "" for the zero time.
func timeParam(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// page reads a page of jobs (wire.Page) from path.
func (c *Client) page(ctx context.Context, path string) ([]*worker.Job, string, error) {
	var out wire.Page
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, "", err
	}
	jobs := make([]*worker.Job, len(out.Jobs))
	for i := range out.Jobs {
		j, err := toWorker(&out.Jobs[i])
		if err != nil {
			return nil, "", err
		}
		jobs[i] = j
	}
	next := ""
	if out.NextCursor != nil {
		next = *out.NextCursor
	}
	return jobs, next, nil
}

// Requeue moves dead jobs back to due now, one request per id, and returns
// how many moved; ids that were not dead are skipped.
func (c *Client) Requeue(ctx context.Context, queue string, ids ...string) (int, error) {
	return c.eachDead(ctx, queue, ids, http.MethodPost, "/requeue")
}

// Purge deletes dead jobs by id, one request per id, and returns how many
// were deleted; ids that were not dead are skipped.
func (c *Client) Purge(ctx context.Context, queue string, ids ...string) (int, error) {
	return c.eachDead(ctx, queue, ids, http.MethodDelete, "")
}

func (c *Client) eachDead(ctx context.Context, queue string, ids []string, method, suffix string) (int, error) {
	n := 0
	for _, id := range ids {
		if err := validateRef(queue, id); err != nil {
			return n, err
		}
		err := c.do(ctx, method, queuePath(queue)+"/dead/"+url.PathEscape(id)+suffix, nil, nil)
		switch {
		case errors.Is(err, worker.ErrNotFound):
		case err != nil:
			return n, err
		default:
			n++
		}
	}
	return n, nil
}

// RequeueAll moves every job that is dead when it starts back to due now:
// RequeueDead of every dead job.
func (c *Client) RequeueAll(ctx context.Context, queue string) (int, error) {
	res, err := c.RequeueDead(ctx, queue, worker.DeadSelection{}, worker.TriageOptions{})
	return res.Changed, err
}

// PurgeAll deletes every job that is dead when it starts: PurgeDead of
// every dead job.
func (c *Client) PurgeAll(ctx context.Context, queue string) (int, error) {
	res, err := c.PurgeDead(ctx, queue, worker.DeadSelection{}, worker.TriageOptions{})
	return res.Changed, err
}

// RequeueDead moves the selected dead jobs back to due now, as
// worker.Client.RequeueDead does, through POST
// /v1/queues/{queue}/dead/requeue: one request per TriageMax jobs (the
// server's bound), each resuming from the last one's next_cursor, until
// the walk is done or opt.Max jobs matched.
func (c *Client) RequeueDead(ctx context.Context, queue string, sel worker.DeadSelection, opt worker.TriageOptions) (worker.TriageResult, error) {
	return c.triage(ctx, queue, "/dead/requeue", sel, opt)
}

// PurgeDead deletes the selected dead jobs, as worker.Client.PurgeDead
// does, through POST /v1/queues/{queue}/dead/purge, in requests as
// RequeueDead's.
func (c *Client) PurgeDead(ctx context.Context, queue string, sel worker.DeadSelection, opt worker.TriageOptions) (worker.TriageResult, error) {
	return c.triage(ctx, queue, "/dead/purge", sel, opt)
}

// triageBody is the body of a requeue or purge.
type triageBody struct {
	IDs    []string    `json:"ids,omitempty"`
	Filter *filterBody `json:"filter,omitempty"`
	DryRun bool        `json:"dry_run,omitempty"`
	Cursor string      `json:"cursor,omitempty"`
	Max    int         `json:"max,omitempty"`
}

type filterBody struct {
	Error      string `json:"error,omitempty"`
	DiedAfter  string `json:"died_after,omitempty"`
	DiedBefore string `json:"died_before,omitempty"`
}

// triageSample is the most ids of a worker.TriageResult's Sample.
const triageSample = 20

func (c *Client) triage(ctx context.Context, queue, suffix string, sel worker.DeadSelection, opt worker.TriageOptions) (worker.TriageResult, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return worker.TriageResult{}, err
	}
	if opt.Max < 0 {
		return worker.TriageResult{}, &worker.ValidationError{Field: "Max", Reason: fmt.Sprintf("must not be negative (got %d)", opt.Max)}
	}
	in := triageBody{IDs: sel.IDs, DryRun: opt.DryRun}
	if f := sel.Filter; !f.IsZero() {
		in.Filter = &filterBody{Error: f.ErrorContains, DiedAfter: timeParam(f.DiedAfter), DiedBefore: timeParam(f.DiedBefore)}
	}
	var res worker.TriageResult
	cursor := opt.Cursor
	for {
		in.Cursor = cursor
		if opt.Max > 0 {
			in.Max = opt.Max - res.Matched // the server takes at most its bound
		}
		var out wire.Triage
		if err := c.do(ctx, http.MethodPost, queuePath(queue)+suffix, in, &out); err != nil {
			if !errors.Is(err, worker.ErrInvalid) {
				res.Next = cursor // resume with the request that failed
			}
			return res, err
		}
		res.Matched += out.Matched
		res.Changed += out.Changed
		res.Sample = append(res.Sample, out.Sample[:min(len(out.Sample), triageSample-len(res.Sample))]...)
		switch {
		case out.NextCursor == nil:
			return res, nil
		case out.Matched == 0:
			res.Next = *out.NextCursor
			return res, fmt.Errorf("courier API: %s%s answered a cursor but matched nothing", queuePath(queue), suffix)
		}
		cursor = *out.NextCursor
		if opt.Max > 0 && res.Matched >= opt.Max {
			res.Next = cursor
			return res, nil
		}
	}
}

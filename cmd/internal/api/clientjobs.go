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
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Jobs reads a page of the jobs of a queue in one state, as
// admin.Client.Jobs does, through GET /v1/queues/{queue}/jobs: the dead
// set's with its filter.
func (c *Client) Jobs(ctx context.Context, p admin.JobListParams) (admin.JobPage, error) {
	if err := worker.ValidateQueueName(p.Queue); err != nil {
		return admin.JobPage{}, err
	}
	params := url.Values{}
	params.Set("state", string(p.State))
	if p.Cursor != "" {
		params.Set("cursor", p.Cursor)
	}
	if p.Limit != 0 {
		params.Set("limit", strconv.Itoa(p.Limit))
	}
	if f := p.Dead; !f.IsZero() {
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
	jobs, next, err := c.page(ctx, queuePath(p.Queue)+"/jobs?"+params.Encode())
	return admin.JobPage{Jobs: jobs, Next: next}, err
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

// Triage requeues or purges the selected dead (or cancelled: p.State)
// jobs, as admin.Client.Triage does, through POST
// /v1/queues/{queue}/dead/requeue or …/dead/purge (…/cancelled/… for the
// cancelled): one request per TriageMax jobs (the server's bound),
// each resuming from the last one's next_cursor, until the walk is done
// or p.Max jobs matched.
func (c *Client) Triage(ctx context.Context, p admin.TriageParams) (admin.TriageResult, error) {
	if err := worker.ValidateQueueName(p.Queue); err != nil {
		return admin.TriageResult{}, err
	}
	switch {
	case p.Action != admin.TriageRequeue && p.Action != admin.TriagePurge:
		return admin.TriageResult{}, &worker.ValidationError{Field: "Action",
			Reason: fmt.Sprintf("must be %q or %q (got %q)", admin.TriageRequeue, admin.TriagePurge, p.Action)}
	case p.Max < 0:
		return admin.TriageResult{}, &worker.ValidationError{Field: "Max", Reason: fmt.Sprintf("must not be negative (got %d)", p.Max)}
	case p.State != "" && p.State != worker.StateDead && p.State != worker.StateCancelled:
		return admin.TriageResult{}, &worker.ValidationError{Field: "State",
			Reason: fmt.Sprintf("must be %q or %q (got %q)", worker.StateDead, worker.StateCancelled, p.State)}
	}
	set := "/dead/"
	if p.State == worker.StateCancelled {
		set = "/cancelled/"
	}
	in := triageBody{IDs: p.IDs, DryRun: p.DryRun}
	if f := p.Filter; !f.IsZero() {
		in.Filter = &filterBody{Error: f.ErrorContains, DiedAfter: timeParam(f.DiedAfter), DiedBefore: timeParam(f.DiedBefore)}
	}
	path := queuePath(p.Queue) + set + string(p.Action)
	var res admin.TriageResult
	cursor := p.Cursor
	for {
		in.Cursor = cursor
		if p.Max > 0 {
			in.Max = p.Max - res.Matched // the server takes at most its bound
		}
		var out wire.Triage
		if err := c.do(ctx, http.MethodPost, path, in, &out); err != nil {
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
			return res, fmt.Errorf("courier API: %s answered a cursor but matched nothing", path)
		}
		cursor = *out.NextCursor
		if p.Max > 0 && res.Matched >= p.Max {
			res.Next = cursor
			return res, nil
		}
	}
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

// triageSample is the most ids of an admin.TriageResult's Sample.
const triageSample = 20

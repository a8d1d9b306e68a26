package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// enqueued is the reply to an enqueue: the job's id and when it is due;
// for a job stored but not confirmed on the replicas its durability asked
// for (202), replicated false and why; a warning when the job went to a
// queue or kind no daemon has ever served (worker.EnqueueResult.Warning).
type enqueued struct {
	ID         string      `json:"id"`
	RunAt      time.Time   `json:"run_at"`
	Replicated *bool       `json:"replicated,omitempty"`
	Error      *wire.Error `json:"error,omitempty"`
	Warning    string      `json:"warning,omitempty"`
}

// POST /v1/queues/{queue}/jobs
func (h *Handler) enqueue(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	body, apiErr := readBody(c.w, c.r, h.limits.SingleBodyBytes())
	if apiErr != nil {
		return 0, nil, apiErr
	}
	spec, apiErr := decodeJob(body, h.limits)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	spec.Queue = queue
	if err := h.mayCreate(c, queue); err != nil {
		return 0, nil, err
	}
	res, err := c.backend.Enqueue(traced(c), []worker.JobSpec{spec})
	if err != nil {
		return 0, nil, err
	}
	out := enqueued{ID: res[0].ID, RunAt: dueAt(spec, c.now), Warning: res[0].Warning}
	status := http.StatusCreated
	if err := res[0].Err; errors.Is(err, worker.ErrNotReplicated) {
		// Stored all the same: a success, told apart by its status.
		out.Replicated, out.Error, status = replicatedFalse(), notReplicated(err), http.StatusAccepted
	} else if err != nil {
		return 0, nil, duplicate(err, "", queue, spec, res[0].ID)
	}
	c.w.Header().Set("Location", jobPath(queue, res[0].ID))
	return status, out, nil
}

// traced is c's context with the W3C trace context of the request's
// traceparent and tracestate headers, if any: a traced backend then
// enqueues as a child of the caller's span, and the job carries that
// trace on (worker.Config.TracerProvider). Headers that do not parse are
// ignored, as the W3C recommendation asks.
func traced(c *call) context.Context {
	return propagation.TraceContext{}.Extract(c.ctx, propagation.HeaderCarrier(c.r.Header))
}

// batchItem is the outcome of one job of a batch. A job created but not
// confirmed on the replicas its durability asked for has replicated false
// and an error of code not_replicated; one created in a queue or kind no
// daemon has ever served, a warning.
type batchItem struct {
	ID         string      `json:"id"`
	Status     string      `json:"status"` // created or conflict
	RunAt      *time.Time  `json:"run_at,omitempty"`
	Replicated *bool       `json:"replicated,omitempty"`
	Error      *wire.Error `json:"error,omitempty"`
	Warning    string      `json:"warning,omitempty"`
}

// batchReply is the reply to a batch, one item per job in request order;
// NotReplicated counts the created jobs that were not confirmed.
type batchReply struct {
	Jobs          []batchItem `json:"jobs"`
	Created       int         `json:"created"`
	Conflicts     int         `json:"conflicts"`
	NotReplicated int         `json:"not_replicated,omitempty"`
}

// POST /v1/queues/{queue}/jobs/batch
func (h *Handler) enqueueBatch(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	body, apiErr := readBody(c.w, c.r, h.limits.BatchBodyBytes())
	if apiErr != nil {
		return 0, nil, apiErr
	}
	specs, apiErr := decodeBatch(body, h.limits)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	for i := range specs {
		specs[i].Queue = queue
	}
	if err := h.mayCreate(c, queue); err != nil {
		return 0, nil, err
	}
	res, err := c.backend.Enqueue(traced(c), specs)
	var ve *worker.ValidationError
	if len(specs) == 1 && errors.As(err, &ve) {
		// The library names a spec's field by its index only among
		// several; a batch's job is named so even alone.
		ve.Field = "specs[0]." + ve.Field
	}
	if err != nil {
		return 0, nil, err
	}
	out := batchReply{Jobs: make([]batchItem, len(res))}
	for i, r := range res {
		if r.Err != nil && !errors.Is(r.Err, worker.ErrNotReplicated) {
			out.Conflicts++
			e := duplicate(r.Err, "jobs["+strconv.Itoa(i)+"].", queue, specs[i], r.ID)
			out.Jobs[i] = batchItem{ID: r.ID, Status: "conflict", Error: &e.wireError}
			continue
		}
		out.Created++
		at := dueAt(specs[i], c.now)
		out.Jobs[i] = batchItem{ID: r.ID, Status: "created", RunAt: &at, Warning: r.Warning}
		if r.Err != nil {
			out.NotReplicated++
			out.Jobs[i].Replicated, out.Jobs[i].Error = replicatedFalse(), notReplicated(r.Err)
		}
	}
	return http.StatusOK, out, nil
}

// duplicate describes an enqueue of spec refused as a duplicate: its id
// exists (or is retained after its job finished), or its unique key is
// held by another job; id is what the worker returned, the existing job's
// either way. prefix starts the field's name ("", "jobs[3].").
func duplicate(err error, prefix, queue string, spec worker.JobSpec, id string) *Error {
	if !errors.Is(err, worker.ErrDuplicate) {
		return errorOf(err)
	}
	var e *Error
	if errors.Is(err, worker.ErrUniqueKeyHeld) {
		e = apiError(wire.CodeConflict, prefix+"unique_key", fmt.Sprintf("queue %q: unique key %q is held by job %q; nothing was added", queue, spec.UniqueKey, id))
	} else {
		e = apiError(wire.CodeConflict, prefix+"id", fmt.Sprintf("queue %q already has a job with id %q; it was left untouched", queue, id))
	}
	e.ExistingID = id
	return e
}

// dueAt is when an enqueued job is due, by the API's clock (the job runs
// by the Redis clock): run_at when ahead, else now plus the delay; in
// milliseconds, as kept.
func dueAt(spec worker.JobSpec, now time.Time) time.Time {
	t := now.Add(spec.Delay)
	if spec.RunAt.After(now) {
		t = spec.RunAt
	}
	return t.UTC().Truncate(time.Millisecond)
}

// GET /v1/queues/{queue}/jobs/{id}
func (h *Handler) getJob(c *call) (int, any, error) {
	queue, id, apiErr := pathJob(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	job, err := c.backend.Get(c.ctx, queue, id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.JobOf(job), nil
}

// DELETE /v1/queues/{queue}/jobs/{id}: 204 whether the job had not
// started (deleted) or was running (now dead, its handler told to stop):
// admin.Operator.Cancel does not tell the two apart. A dead job is 409
// (errorOf).
func (h *Handler) cancelJob(c *call) (int, any, error) {
	queue, id, apiErr := pathJob(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if err := c.backend.Cancel(c.ctx, queue, id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// pathQueue returns the valid queue name of the path.
func pathQueue(r *http.Request) (string, *Error) {
	q := r.PathValue("queue")
	if err := worker.ValidateQueueName(q); err != nil {
		return "", fieldError("queue", err)
	}
	return q, nil
}

// pathJob returns the valid queue name and job id of the path.
func pathJob(r *http.Request) (queue, id string, err *Error) {
	if queue, err = pathQueue(r); err != nil {
		return "", "", err
	}
	id = r.PathValue("id")
	if verr := worker.ValidateID(id); verr != nil {
		return "", "", fieldError("id", verr)
	}
	return queue, id, nil
}

// jobPath is the path of a job, escaped.
func jobPath(queue, id string) string {
	return "/v1/queues/" + url.PathEscape(queue) + "/jobs/" + url.PathEscape(id)
}

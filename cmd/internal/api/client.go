package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Client calls the API over HTTP: it is the admin.Operator of a program
// that reaches Courier through the API rather than Redis (the courier
// CLI's --api mode), each verb one route or a few. It does what
// *admin.Client does and fails alike: a refused value is an *Error that
// errors.Is matches to worker.ErrInvalid, an existing id to
// worker.ErrDuplicate (a held unique key too), a missing job to
// worker.ErrNotFound, a dead job that cannot be cancelled to
// worker.ErrJobDead, a queue that cannot be forgotten to
// admin.ErrQueueInUse, Redis out of memory to worker.ErrRedisOOM, and a
// job not confirmed on replicas to worker.ErrNotReplicated.
// It is safe for concurrent use.
type Client struct {
	base  string // scheme://host[:port][/path], without /v1
	token string
	http  *http.Client
}

var _ admin.Operator = (*Client)(nil)

// NewClient returns a client of the API at baseURL (http://host:port, with
// or without /v1) sending token; hc nil means a client that gives up after
// a minute and does not follow redirects.
func NewClient(baseURL, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("API URL %q: want http(s)://host:port", baseURL)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(u.String(), "/"), "/v1")
	if hc == nil {
		hc = &http.Client{
			Timeout:       time.Minute,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &Client{base: base, token: token, http: hc}, nil
}

// jobBody is an enqueue request's job.
type jobBody struct {
	ID                string            `json:"id,omitempty"`
	Kind              string            `json:"kind,omitempty"`
	Key               string            `json:"key,omitempty"`
	Payload           json.RawMessage   `json:"payload,omitempty"`
	PayloadBase64     *string           `json:"payload_base64,omitempty"`
	Delay             string            `json:"delay,omitempty"`
	RunAt             string            `json:"run_at,omitempty"`
	MaxAttempts       int               `json:"max_attempts,omitempty"`
	Timeout           string            `json:"timeout,omitempty"`
	Priority          string            `json:"priority,omitempty"`
	UniqueKey         string            `json:"unique_key,omitempty"`
	UniqueFor         string            `json:"unique_for,omitempty"`
	UniqueAfterFinish bool              `json:"unique_after_finish,omitempty"`
	Durability        *durabilityBody   `json:"durability,omitempty"`
	Headers           map[string]string `json:"headers,omitempty"`
}

// durabilityBody is a job's durability.
type durabilityBody struct {
	Replicas int    `json:"replicas,omitempty"`
	Timeout  string `json:"timeout,omitempty"`
	AOF      bool   `json:"aof,omitempty"`
}

// bodyOf encodes spec so that the API stores its payload byte for byte:
// as JSON when it is compact JSON (which the API keeps as is), else in
// base64.
func bodyOf(spec worker.JobSpec) jobBody {
	b := jobBody{ID: spec.ID, Kind: spec.Kind, Key: spec.Key, MaxAttempts: spec.MaxAttempts, UniqueKey: spec.UniqueKey, UniqueAfterFinish: spec.UniqueAfterFinish,
		Headers: spec.Headers}
	if len(spec.Payload) > 0 {
		b.Payload, b.PayloadBase64 = wire.BytesOf(spec.Payload)
	}
	if spec.Delay != 0 {
		b.Delay = spec.Delay.String()
	}
	if !spec.RunAt.IsZero() {
		b.RunAt = spec.RunAt.Format(time.RFC3339Nano)
	}
	if spec.Timeout != 0 {
		b.Timeout = spec.Timeout.String()
	}
	if spec.Priority != worker.PriorityNormal {
		b.Priority = spec.Priority.String()
	}
	if spec.UniqueFor != 0 {
		b.UniqueFor = spec.UniqueFor.String()
	}
	if d := spec.Durability; d != (worker.Durability{}) {
		b.Durability = &durabilityBody{Replicas: d.Replicas, AOF: d.AOF}
		if d.Timeout != 0 {
			b.Durability.Timeout = d.Timeout.String()
		}
	}
	return b
}

// resultError is the error of an enqueue result the server answered as a
// success: a job stored but not confirmed on replicas (its error's code is
// not_replicated); nil for any other.
func resultError(e *wire.Error) error {
	if e == nil || e.Code != wire.CodeNotReplicated {
		return nil
	}
	return &Error{wireError: *e, cause: worker.ErrNotReplicated}
}

// Enqueue adds jobs as admin.Client.Enqueue does: one job through POST
// /v1/queues/{queue}/jobs, several through POST …/jobs/batch, one request
// per queue (of at most the server's max_batch jobs), in the order of
// each queue's first job. Each result's Err wraps worker.ErrDuplicate when
// its id existed or its unique key was held (its ID is then the
// holder's), and worker.ErrNotReplicated when its job was stored but not
// confirmed on replicas; its Warning is the server's (a queue or kind no
// daemon has ever served). A refused request is the error, with the
// results of the requests before it.
func (c *Client) Enqueue(ctx context.Context, specs []worker.JobSpec) ([]worker.EnqueueResult, error) {
	var queues []string
	for i, spec := range specs {
		if err := worker.ValidateQueueName(spec.Queue); err != nil {
			var ve *worker.ValidationError
			if len(specs) > 1 && errors.As(err, &ve) {
				ve.Field = fmt.Sprintf("specs[%d].%s", i, ve.Field)
			}
			return nil, err
		}
		if !slices.Contains(queues, spec.Queue) {
			queues = append(queues, spec.Queue)
		}
	}
	res := make([]worker.EnqueueResult, len(specs))
	if len(specs) == 1 {
		r, err := c.enqueueOne(ctx, specs[0])
		if err != nil && !errors.Is(err, worker.ErrDuplicate) && !errors.Is(err, worker.ErrNotReplicated) {
			return nil, err
		}
		r.Err = err
		res[0] = r
		return res, nil
	}
	for _, queue := range queues {
		var at []int // the indexes of queue's specs
		for i := range specs {
			if specs[i].Queue == queue {
				at = append(at, i)
			}
		}
		if err := c.enqueueBatch(ctx, queue, specs, at, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// enqueueOne adds spec through POST /v1/queues/{queue}/jobs and returns
// its id and the server's warning; an existing id is an error that wraps
// worker.ErrDuplicate, with the id returned, and so is a unique key
// another job holds, with that job's id returned. A job stored but not
// confirmed on the replicas its Durability asked for is returned with an
// error that matches worker.ErrNotReplicated.
func (c *Client) enqueueOne(ctx context.Context, spec worker.JobSpec) (worker.EnqueueResult, error) {
	var out enqueued
	err := c.do(ctx, http.MethodPost, queuePath(spec.Queue)+"/jobs", bodyOf(spec), &out)
	if errors.Is(err, worker.ErrDuplicate) {
		var e *Error
		if errors.As(err, &e) && e.ExistingID != "" {
			return worker.EnqueueResult{ID: e.ExistingID}, err
		}
		return worker.EnqueueResult{ID: spec.ID}, err // a server of a version before existing_id
	}
	if err != nil {
		return worker.EnqueueResult{}, err
	}
	return worker.EnqueueResult{ID: out.ID, Warning: out.Warning}, resultError(out.Error)
}

// enqueueBatch adds the specs at the indexes at, all of queue, through
// POST /v1/queues/{queue}/jobs/batch, and fills their results.
func (c *Client) enqueueBatch(ctx context.Context, queue string, specs []worker.JobSpec, at []int, res []worker.EnqueueResult) error {
	in := struct {
		Jobs []jobBody `json:"jobs"`
	}{Jobs: make([]jobBody, len(at))}
	for k, i := range at {
		in.Jobs[k] = bodyOf(specs[i])
	}
	var out batchReply
	if err := c.do(ctx, http.MethodPost, queuePath(queue)+"/jobs/batch", in, &out); err != nil {
		return err
	}
	if len(out.Jobs) != len(at) {
		return fmt.Errorf("courier API: answered %d results for %d jobs", len(out.Jobs), len(at))
	}
	for k, item := range out.Jobs {
		r := &res[at[k]]
		r.ID = item.ID
		if item.Status == "created" {
			r.Err, r.Warning = resultError(item.Error), item.Warning
			continue
		}
		e := &Error{wireError: wire.Error{Code: wire.CodeConflict, Message: "not created"}}
		if item.Error != nil {
			e.wireError = *item.Error
		}
		e.cause = conflictCause(e)
		r.Err = e
	}
	return nil
}

// Get reads a job.
func (c *Client) Get(ctx context.Context, queue, id string) (*worker.Job, error) {
	if err := validateRef(queue, id); err != nil {
		return nil, err
	}
	var v wire.Job
	if err := c.do(ctx, http.MethodGet, queuePath(queue)+"/jobs/"+url.PathEscape(id), nil, &v); err != nil {
		return nil, err
	}
	return toWorker(&v)
}

// Cancel cancels a job as admin.Client.Cancel does: one that has not
// started is deleted, a running one ends in the dead set with the last
// error "cancelled". A missing job is an error wrapping worker.ErrNotFound,
// a dead one worker.ErrJobDead.
func (c *Client) Cancel(ctx context.Context, queue, id string) error {
	if err := validateRef(queue, id); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, queuePath(queue)+"/jobs/"+url.PathEscape(id), nil, nil)
}

// Stats counts the jobs of queue by state and tells whether it is paused,
// from GET /v1/queues/{queue}.
func (c *Client) Stats(ctx context.Context, queue string) (admin.QueueStats, error) {
	v, err := c.queue(ctx, queue)
	return v.Stats(), err
}

// Fleet reads what the processes serving queue report, from GET
// /v1/queues/{queue}: the fleet as admin.Client.Fleet gives it.
func (c *Client) Fleet(ctx context.Context, queue string) (admin.Fleet, error) {
	v, err := c.queue(ctx, queue)
	if err != nil {
		return admin.Fleet{}, err
	}
	return v.Fleet(), nil
}

// queue reads a queue whole, as GET /v1/queues/{queue} shows it: its
// state, sizes and fleet (Stats and Fleet each keep their part).
func (c *Client) queue(ctx context.Context, queue string) (wire.Queue, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return wire.Queue{}, err
	}
	var v wire.Queue
	err := c.do(ctx, http.MethodGet, queuePath(queue), nil, &v)
	return v, err
}

// Pause stops workers claiming the jobs of queue; pausing a paused queue
// changes nothing.
func (c *Client) Pause(ctx context.Context, queue string) error {
	return c.setPaused(ctx, queue, "/pause")
}

// Resume lets workers claim the jobs of queue again; resuming a running
// queue changes nothing.
func (c *Client) Resume(ctx context.Context, queue string) error {
	return c.setPaused(ctx, queue, "/resume")
}

func (c *Client) setPaused(ctx context.Context, queue, action string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, queuePath(queue)+action, nil, nil)
}

// Queues reads a page of the known queues through GET
// /v1/queues?cursor=&limit=. The token decides which queues the server
// lists (a token limited to some lists only those), so p.Only, which the
// route does not take, is refused: a *worker.ValidationError naming Only.
func (c *Client) Queues(ctx context.Context, p admin.QueueListParams) (admin.QueuePage, error) {
	if p.Only != nil {
		return admin.QueuePage{}, &worker.ValidationError{Field: "Only",
			Reason: "is not sent through the HTTP API: the token's queues limit its listing; leave it nil"}
	}
	params := url.Values{}
	if p.Cursor != "" {
		params.Set("cursor", p.Cursor)
	}
	if p.Limit != 0 {
		params.Set("limit", strconv.Itoa(p.Limit))
	}
	path := "/v1/queues"
	if len(params) > 0 {
		path += "?" + params.Encode()
	}
	var out queueList
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return admin.QueuePage{}, err
	}
	page := admin.QueuePage{Names: make([]string, len(out.Queues))}
	for i, q := range out.Queues {
		page.Names[i] = q.Name
	}
	if out.NextCursor != nil {
		page.Next = *out.NextCursor
	}
	return page, nil
}

// Forget forgets a retired queue as admin.Client.Forget does, through
// DELETE /v1/queues/{queue}; a queue in use is an error wrapping
// admin.ErrQueueInUse that says what holds it.
func (c *Client) Forget(ctx context.Context, queue string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, queuePath(queue), nil, nil)
}

func validateRef(queue, id string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	return worker.ValidateID(id)
}

func queuePath(queue string) string { return "/v1/queues/" + url.PathEscape(queue) }

// toWorker is v as admin.Client gives it; a job a server could not
// have written is an error naming the API.
func toWorker(v *wire.Job) (*worker.Job, error) {
	j, err := v.ToWorker()
	if err != nil {
		return nil, fmt.Errorf("courier API: %w", err)
	}
	return j, nil
}

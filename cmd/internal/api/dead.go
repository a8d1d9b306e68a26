package api

import (
	"fmt"
	"net/http"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// GET /v1/queues/{queue}/dead?cursor=&limit=: GET …/jobs?state=dead
// without filters, kept for the clients that use it.
func (h *Handler) listDead(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	q, apiErr := deadQuery(c.r.URL.RawQuery)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	page, err := c.backend.Dead(c.ctx, queue, q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.PageOf(page.Jobs, page.Next), nil
}

// POST /v1/queues/{queue}/dead/{id}/requeue
func (h *Handler) requeueDead(c *call) (int, any, error) {
	queue, id, apiErr := pathJob(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	n, err := c.backend.Requeue(c.ctx, queue, id)
	if err != nil {
		return 0, nil, err
	}
	if n == 0 {
		return 0, nil, notDead(queue, id)
	}
	return http.StatusOK, requeued{n}, nil
}

// DELETE /v1/queues/{queue}/dead/{id}
func (h *Handler) purgeDead(c *call) (int, any, error) {
	queue, id, apiErr := pathJob(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	n, err := c.backend.Purge(c.ctx, queue, id)
	if err != nil {
		return 0, nil, err
	}
	if n == 0 {
		return 0, nil, notDead(queue, id)
	}
	return http.StatusNoContent, nil, nil
}

// DELETE /v1/queues/{queue}/dead: every dead job, in one request however
// many there are; POST …/dead/purge bounds each request.
func (h *Handler) purgeAllDead(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	n, err := c.backend.PurgeAll(c.ctx, queue)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, purged{n}, nil
}

// requeued is the reply of POST /v1/queues/{queue}/dead/{id}/requeue.
type requeued struct {
	Requeued int `json:"requeued"`
}

// purged is the reply of DELETE /v1/queues/{queue}/dead.
type purged struct {
	Purged int `json:"purged"`
}

func notDead(queue, id string) *Error {
	return apiError(wire.CodeNotFound, "id", fmt.Sprintf("queue %q has no dead job %q", queue, id))
}

// GET /v1/queues/{queue}/jobs?state=&cursor=&limit=&error=&died_after=&died_before=
func (h *Handler) listJobs(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	q, apiErr := listQuery(c.r.URL.RawQuery)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	page, err := c.backend.List(c.ctx, queue, q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.PageOf(page.Jobs, page.Next), nil
}

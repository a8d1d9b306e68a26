package api

import (
	"fmt"
	"net/http"
)

// deadPage is a page of dead jobs.
type deadPage struct {
	Jobs []jobView `json:"jobs"`
	// NextCursor continues the list (?cursor=); null at the end.
	NextCursor *string `json:"next_cursor"`
}

// GET /v1/queues/{queue}/dead?cursor=&limit=
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
	out := deadPage{Jobs: make([]jobView, len(page.Jobs))}
	for i, j := range page.Jobs {
		out.Jobs[i] = viewJob(j)
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return http.StatusOK, out, nil
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

// POST /v1/queues/{queue}/dead/requeue
func (h *Handler) requeueAllDead(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	n, err := c.backend.RequeueAll(c.ctx, queue)
	if err != nil {
		return 0, nil, err
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

// DELETE /v1/queues/{queue}/dead
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

type requeued struct {
	Requeued int `json:"requeued"`
}

type purged struct {
	Purged int `json:"purged"`
}

func notDead(queue, id string) *Error {
	return apiError(CodeNotFound, "id", fmt.Sprintf("queue %q has no dead job %q", queue, id))
}

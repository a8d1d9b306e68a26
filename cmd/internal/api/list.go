package api

import (
	"net/http"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// GET /v1/queues/{queue}/jobs?state=&cursor=&limit=&error=&died_after=&died_before=:
// a page of the queue's jobs in one state, the dead set's with its filter
// (the one list of dead jobs).
func (h *Handler) listJobs(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	p, apiErr := listQuery(c.r.URL.RawQuery)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	p.Queue = queue
	page, err := c.backend.Jobs(c.ctx, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.PageOf(page.Jobs, page.Next), nil
}

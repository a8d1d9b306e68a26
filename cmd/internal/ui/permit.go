package ui

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
)

// Each page shows what an API route would answer, and is shown only to a
// principal the API would serve that route: the page asks API.Permit, the
// one rule of roles and queue limits that every API request passes. So a
// producer token reads through the UI exactly what it reads through the
// API (a job by id) and nothing it does not (queue lists, stats, fleets,
// locks, schedules, job lists with their errors and results). The routes,
// as the API declares them:
const (
	routeQueues   = "GET /v1/queues"
	routeQueue    = "GET /v1/queues/{queue}"
	routeJobs     = "GET /v1/queues/{queue}/jobs"
	routeJob      = "GET /v1/queues/{queue}/jobs/{id}"
	routeEnqueue  = "POST /v1/queues/{queue}/jobs"
	routeCancel   = "DELETE /v1/queues/{queue}/jobs/{id}"
	routePause    = "POST /v1/queues/{queue}/pause"
	routeRequeue  = "POST /v1/queues/{queue}/dead/requeue"
	routePurge    = "POST /v1/queues/{queue}/dead/purge"
	routeKeys     = "GET /v1/queues/{queue}/keys"
	routeKey      = "GET /v1/queues/{queue}/keys/{key}"
	routeSetKey   = "PUT /v1/queues/{queue}/keys/{key}"
	routeResetKey = "DELETE /v1/queues/{queue}/keys/{key}"
)

// permit returns nil when s's principal may call route on queue ("" for
// a route without one), else the API's refusal as a 403 page.
func (h *Handler) permit(s *session, route, queue string) error {
	err := h.opts.API.Permit(s.p, route, queue)
	var e *api.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return &pageError{status: http.StatusForbidden, msg: upperFirst(e.Message) + "."}
	default:
		return fmt.Errorf("ui: %w", err) // a route the API lacks: a mistake here, logged as a 500
	}
}

// may reports whether s's principal may call route on queue.
func (h *Handler) may(s *session, route, queue string) bool {
	return h.permit(s, route, queue) == nil
}

// pagePermit checks r, a request of a page that shows route, against the
// rule: the queue is the path's, if route has one.
func (h *Handler) pagePermit(r *http.Request, s *session, route string) error {
	if route == "" {
		return nil
	}
	queue := ""
	if strings.Contains(route, "{queue}") {
		var err error
		if queue, err = queueName(r); err != nil {
			return err
		}
	}
	return h.permit(s, route, queue)
}

// upperFirst capitalises the first letter of an API message (which starts
// with a token's name or a lower-case word) for a page.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

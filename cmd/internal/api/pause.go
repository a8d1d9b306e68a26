package api

import "net/http"

// pauseState is the reply of pause and resume: the queue's state after
// the call.
type pauseState struct {
	Paused bool `json:"paused"`
}

// POST /v1/queues/{queue}/pause: workers stop claiming the queue's jobs;
// running jobs finish, and enqueues still go in. Pausing a paused queue
// changes nothing.
func (h *Handler) pauseQueue(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if err := c.backend.Pause(c.ctx, queue); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, pauseState{Paused: true}, nil
}

// POST /v1/queues/{queue}/resume: workers claim the queue's jobs again.
// Resuming a running queue changes nothing.
func (h *Handler) resumeQueue(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if err := c.backend.Resume(c.ctx, queue); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, pauseState{Paused: false}, nil
}

package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/seed-53d105c9/courier/internal/wire"
)

// queueList is the reply of GET /v1/queues.
type queueList struct {
	Queues []wire.Queue `json:"queues"`
}

// GET /v1/queues: the queues the token may see.
func (h *Handler) listQueues(c *call) (int, any, error) {
	names, err := c.backend.Queues(c.ctx)
	if err != nil {
		return 0, nil, err
	}
	// A token limited to some queues learns of no other.
	names = slices.DeleteFunc(names, func(q string) bool { return !c.ident.sees(q) })
	slices.Sort(names)
	out := queueList{Queues: make([]wire.Queue, 0, len(names))}
	for _, name := range names {
		v, err := viewQueue(c.ctx, c.backend, name)
		if err != nil {
			return 0, nil, err
		}
		out.Queues = append(out.Queues, v)
	}
	return http.StatusOK, out, nil
}

// GET /v1/queues/{queue}
func (h *Handler) getQueue(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	v, err := viewQueue(c.ctx, c.backend, queue)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v, nil
}

// viewQueue reads a queue's state, sizes and fleet.
func viewQueue(ctx context.Context, b Backend, name string) (wire.Queue, error) {
	s, err := b.Stats(ctx, name)
	if err != nil {
		return wire.Queue{}, err
	}
	f, err := b.Fleet(ctx, name)
	if err != nil {
		return wire.Queue{}, err
	}
	return wire.QueueOf(name, s, f), nil
}

// DELETE /v1/queues/{queue}: forget a retired queue (worker.Client.ForgetQueue);
// 409 while anything holds it, saying what.
func (h *Handler) forgetQueue(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if err := c.backend.ForgetQueue(c.ctx, queue); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// queueList is the reply of GET /v1/queues: a page of queues, and the
// cursor of the next (null after the last).
type queueList struct {
	Queues     []wire.Queue `json:"queues"`
	NextCursor *string      `json:"next_cursor"`
}

// GET /v1/queues?cursor=&limit=: a page of the queues the token may see,
// read a page at a time (admin.Operator.Queues), so that its cost does
// not grow with the number of queues: at most admin.QueuesPerPageMax,
// each read as GET /v1/queues/{queue} reads it.
func (h *Handler) listQueues(c *call) (int, any, error) {
	values, apiErr := queryValues(c.r.URL.RawQuery, "cursor", "limit")
	if apiErr != nil {
		return 0, nil, apiErr
	}
	limit := admin.QueuesPerPageDefault
	if v, ok := values["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > admin.QueuesPerPageMax {
			return 0, nil, invalidField("limit", fmt.Sprintf("must be a whole number from 1 to %d (got %q)", admin.QueuesPerPageMax, v))
		}
		limit = n
	}
	// A token limited to some queues learns of no other.
	page, err := c.backend.Queues(c.ctx, admin.QueueListParams{Only: c.ident.queues, Cursor: values["cursor"], Limit: limit})
	if err != nil {
		return 0, nil, err
	}
	out := queueList{Queues: make([]wire.Queue, len(page.Names))}
	err = eachQueue(c.ctx, page.Names, func(ctx context.Context, i int, name string) (err error) {
		out.Queues[i], err = viewQueue(ctx, c.backend, name)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	if page.Next != "" {
		out.NextCursor = &page.Next
	}
	return http.StatusOK, out, nil
}

// eachQueue runs fn for each name, a few at a time, and returns the first
// error.
func eachQueue(ctx context.Context, names []string, fn func(ctx context.Context, i int, name string) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, name := range names {
		g.Go(func() error { return fn(ctx, i, name) })
	}
	return g.Wait()
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
func viewQueue(ctx context.Context, b admin.Operator, name string) (wire.Queue, error) {
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

// DELETE /v1/queues/{queue}: forget a retired queue (admin.Operator.Forget);
// 409 while anything holds it, saying what.
func (h *Handler) forgetQueue(c *call) (int, any, error) {
	queue, apiErr := pathQueue(c.r)
	if apiErr != nil {
		return 0, nil, apiErr
	}
	if err := c.backend.Forget(c.ctx, queue); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

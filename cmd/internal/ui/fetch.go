package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"golang.org/x/sync/errgroup"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// fetchLimit bounds the Redis calls a page has in flight at once. The
// client pipelines concurrent calls on its connections, so a hundred
// queues' stats, fleets and histories take a few round trips.
const fetchLimit = 16

// fetch runs the calls concurrently, at most fetchLimit at once, and
// returns the first error; the others' context is then cancelled.
func fetch(ctx context.Context, calls ...func(context.Context) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchLimit)
	for _, call := range calls {
		g.Go(func() error { return call(ctx) })
	}
	return g.Wait()
}

// queuesPerPage is how many queues a page across queues (the overview,
// fleet, locks, periodic) reads at once: the set of queues is read a page
// at a time, so a page costs the same at 40,000 queues as at 40.
const queuesPerPage = admin.QueuesPerPageMax

// queuePager leads to the first and the next page of a listing across
// queues ("" when there is none).
type queuePager struct {
	First, Next string
}

// visibleQueues returns the client the pages read through and the page of
// the queues s's principal sees that r's cursor asks for (the first page
// without one), sorted, with the pager of path, the page's own path.
func (h *Handler) visibleQueues(r *http.Request, s *session, path string) (Backend, []string, queuePager, error) {
	b, err := h.backend()
	if err != nil {
		return nil, nil, queuePager{}, err
	}
	cursor := r.URL.Query().Get("cursor")
	page, err := b.Queues(r.Context(), admin.QueueListParams{Only: s.p.Queues, Cursor: cursor, Limit: queuesPerPage})
	if ve := (*worker.ValidationError)(nil); errors.As(err, &ve) && ve.Field == "Cursor" {
		return nil, nil, queuePager{}, &pageError{status: http.StatusBadRequest, msg: "This page's cursor is not valid; start from the first page."}
	}
	if err != nil {
		return nil, nil, queuePager{}, fmt.Errorf("list queues: %w", err)
	}
	var pager queuePager
	if cursor != "" {
		pager.First = path
	}
	if page.Next != "" {
		pager.Next = path + "?" + url.Values{"cursor": {page.Next}}.Encode()
	}
	return b, page.Names, pager, nil
}

// knownQueue fails with a 404 page when queue is not one of b's queues.
func knownQueue(ctx context.Context, b Backend, queue string) error {
	page, err := b.Queues(ctx, admin.QueueListParams{Only: []string{queue}, Limit: 1})
	if err != nil {
		return fmt.Errorf("look the queue up: %w", err)
	}
	if len(page.Names) == 0 {
		return &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("There is no queue %q.", queue)}
	}
	return nil
}

// lag is a quantile of the lag of the jobs started over minutes, "—" when
// none started.
func lag(minutes []admin.HistoryMinute, q float64) string {
	d, ok := admin.LagQuantile(minutes, q)
	if !ok {
		return "—"
	}
	return formatDuration(d)
}

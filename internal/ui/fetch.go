package ui

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/seed-53d105c9/courier/worker"
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

// visibleQueues returns the client the pages read through and the queues
// s's principal sees, sorted.
func (h *Handler) visibleQueues(r *http.Request, s *session) (Backend, []string, error) {
	b, err := h.backend()
	if err != nil {
		return nil, nil, err
	}
	all, err := b.Queues(r.Context())
	if err != nil {
		return nil, nil, fmt.Errorf("list queues: %w", err)
	}
	out := make([]string, 0, len(all))
	for _, q := range all {
		if s.p.Sees(q) {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return b, out, nil
}

// knownQueue fails with a 404 page when queue is not one of b's queues.
func knownQueue(ctx context.Context, b Backend, queue string) error {
	all, err := b.Queues(ctx)
	if err != nil {
		return fmt.Errorf("list queues: %w", err)
	}
	if !slices.Contains(all, queue) {
		return &pageError{status: http.StatusNotFound, msg: fmt.Sprintf("There is no queue %q.", queue)}
	}
	return nil
}

// lag is a quantile of the lag of the jobs started over minutes, "—" when
// none started.
func lag(minutes []worker.HistoryMinute, q float64) string {
	d, ok := worker.LagQuantile(minutes, q)
	if !ok {
		return "—"
	}
	return formatDuration(d)
}

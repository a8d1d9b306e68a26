package ui

import (
	"context"
	"net/http"

	"github.com/seed-53d105c9/courier/worker/admin"
)

// periodicRow is one schedule of the periodic page.
type periodicRow struct {
	Queue string
	admin.PeriodicStatus
}

// periodic serves GET /ui/periodic: the schedules of the queues of the
// page.
func (h *Handler) periodic(w http.ResponseWriter, r *http.Request, s *session) error {
	b, queues, pager, err := h.visibleQueues(r, s, "/ui/periodic")
	if err != nil {
		return err
	}
	per := make([][]admin.PeriodicStatus, len(queues))
	calls := make([]func(context.Context) error, len(queues))
	for i, q := range queues {
		calls[i] = func(ctx context.Context) (err error) {
			per[i], err = b.Periodic(ctx, q)
			return wrap(q, "periodic", err)
		}
	}
	if err := fetch(r.Context(), calls...); err != nil {
		return err
	}
	var rows []periodicRow
	for i, q := range queues {
		for _, p := range per[i] {
			rows = append(rows, periodicRow{Queue: q, PeriodicStatus: p})
		}
	}
	h.render(w, r, s, http.StatusOK, "periodic", "Periodic schedules", "periodic", pagedRows[periodicRow]{Rows: rows, Pager: pager})
	return nil
}

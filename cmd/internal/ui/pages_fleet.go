package ui

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// The fleet of processes and the leader locks, across the queues the
// principal sees, a page of queuesPerPage queues at a time: both read the
// fleet of each queue of the page, concurrently.

// fleets reads the fleet of each queue of the page r asks for.
func (h *Handler) fleets(r *http.Request, s *session, path string) ([]string, []admin.Fleet, queuePager, error) {
	b, queues, pager, err := h.visibleQueues(r, s, path)
	if err != nil {
		return nil, nil, queuePager{}, err
	}
	fleets := make([]admin.Fleet, len(queues))
	calls := make([]func(context.Context) error, len(queues))
	for i, q := range queues {
		calls[i] = func(ctx context.Context) (err error) {
			fleets[i], err = b.Fleet(ctx, q)
			return wrap(q, "fleet", err)
		}
	}
	return queues, fleets, pager, fetch(r.Context(), calls...)
}

// pagedRows is the data of a page across queues: its rows, and the pager
// of the queues' pages.
type pagedRows[T any] struct {
	Rows  []T
	Pager queuePager
}

// process is one process of the fleet page, across the queues it serves.
type process struct {
	ID        string
	Version   string
	StartedAt time.Time
	Reported  time.Time // its latest report to any queue
	Queues    []servedQueue
	Leads     []lead
}

// servedQueue is one queue a process serves.
type servedQueue struct {
	Name        string
	Concurrency int
	RateLimit   worker.RateLimit
	Leader      bool
	Periodic    []string
	Kinds       []string // by name (worker.Kinds); nil: one handler for every job
}

// fleet serves GET /ui/fleet: the processes serving the queues of the
// page (of those the principal sees), by process id.
func (h *Handler) fleet(w http.ResponseWriter, r *http.Request, s *session) error {
	queues, fleets, pager, err := h.fleets(r, s, "/ui/fleet")
	if err != nil {
		return err
	}
	byID := map[string]*process{}
	for i, q := range queues {
		for _, fp := range fleets[i].Processes {
			p := byID[fp.ID]
			if p == nil {
				p = &process{ID: fp.ID}
				byID[fp.ID] = p
			}
			p.Version = cmp.Or(p.Version, fp.Version)
			if p.StartedAt.IsZero() || (!fp.StartedAt.IsZero() && fp.StartedAt.Before(p.StartedAt)) {
				p.StartedAt = fp.StartedAt
			}
			if fp.ReportedAt.After(p.Reported) {
				p.Reported = fp.ReportedAt
			}
			p.Queues = append(p.Queues, servedQueue{Name: q, Concurrency: fp.Concurrency, RateLimit: fp.RateLimit,
				Leader: fp.Leader, Periodic: fp.Periodic, Kinds: fp.Kinds})
			switch n, f := fleets[i].Leads(fp.ID), fleets[i]; {
			case n > 0 && f.Partitions > 1:
				p.Leads = append(p.Leads, lead{Queue: q, Partitions: fmt.Sprintf("%d of %d partitions", n, f.Partitions)})
			case n > 0:
				p.Leads = append(p.Leads, lead{Queue: q})
			}
		}
	}
	procs := make([]*process, 0, len(byID))
	for _, p := range byID {
		procs = append(procs, p)
	}
	slices.SortFunc(procs, func(a, b *process) int { return cmp.Compare(a.ID, b.ID) })
	h.render(w, r, s, http.StatusOK, "fleet", "Fleet", "fleet", pagedRows[*process]{Rows: procs, Pager: pager})
	return nil
}

// lead is a queue a process leads; Partitions says how many of a
// partitioned queue's partitions ("3 of 12 partitions").
type lead struct {
	Queue      string
	Partitions string
}

// lockRow is one queue's leader lock.
type lockRow struct {
	Queue  string
	Holder string
	TTL    time.Duration
}

// locks serves GET /ui/locks: the leader lock of each queue of the page,
// its holder and the time left on it.
func (h *Handler) locks(w http.ResponseWriter, r *http.Request, s *session) error {
	queues, fleets, pager, err := h.fleets(r, s, "/ui/locks")
	if err != nil {
		return err
	}
	rows := make([]lockRow, len(queues))
	for i, q := range queues {
		rows[i] = lockRow{Queue: q, Holder: fleets[i].Leader, TTL: fleets[i].LeaderTTL}
	}
	h.render(w, r, s, http.StatusOK, "locks", "Leader locks", "locks", pagedRows[lockRow]{Rows: rows, Pager: pager})
	return nil
}

package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// historyWindow is how far back the charts go.
const historyWindow = time.Hour

// historySpan is the minutes the charts show at now: the hour up to and
// including the minute in progress, whose counts grow until it ends.
func historySpan(now time.Time) (from, to time.Time) {
	to = now.Truncate(time.Minute).Add(time.Minute)
	return to.Add(-historyWindow), to
}

// overviewView is the data of the overview.
type overviewView struct {
	Rows  []queueRow
	Chart chart
	Pager queuePager
	// Total is the number of queues, for a principal that sees every
	// queue; -1 otherwise.
	Total int64
	// Note, for a principal that may not list the queues, says why; the
	// page then offers to open a queue by name (Own: the queues its
	// token is limited to) and shows nothing read from Redis.
	Note string
	Own  []string
}

// queueRow is one queue of the overview.
type queueRow struct {
	Name        string
	Stats       admin.QueueStats
	Leader      string
	Workers     int
	Concurrency int
	Spark       spark
	P50, P99    string
}

// overview serves GET /ui/: the queues the principal sees, a page of
// queuesPerPage at a time (by cursor), with the stats, fleet and last hour
// of history of each read concurrently, and their sum as a chart.
func (h *Handler) overview(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := h.permit(s, routeQueues, ""); err != nil {
		var pe *pageError
		if !errors.As(err, &pe) {
			return err
		}
		h.render(w, r, s, http.StatusOK, "overview", "Overview", "overview", overviewView{Note: pe.msg, Own: s.p.Queues})
		return nil
	}
	b, queues, pager, err := h.visibleQueues(r, s, "/ui/")
	if err != nil {
		return err
	}
	v := overviewView{Pager: pager, Total: -1}

	now := h.now()
	from, to := historySpan(now)
	stats := make([]admin.QueueStats, len(queues))
	fleets := make([]admin.Fleet, len(queues))
	histories := make([][]admin.HistoryMinute, len(queues))
	calls := make([]func(context.Context) error, 0, 3*len(queues)+1)
	if s.p.Queues == nil {
		calls = append(calls, func(ctx context.Context) (err error) {
			if v.Total, err = b.QueueCount(ctx); err != nil {
				return fmt.Errorf("count queues: %w", err)
			}
			return nil
		})
	}
	for i, q := range queues {
		calls = append(calls,
			func(ctx context.Context) (err error) {
				if stats[i], err = b.Stats(ctx, q); err != nil {
					return fmt.Errorf("queue %q: stats: %w", q, err)
				}
				return nil
			},
			func(ctx context.Context) (err error) {
				if fleets[i], err = b.Fleet(ctx, q); err != nil {
					return fmt.Errorf("queue %q: fleet: %w", q, err)
				}
				return nil
			},
			func(ctx context.Context) (err error) {
				if histories[i], err = h.history.history(ctx, b, q, from, to, now); err != nil {
					return fmt.Errorf("queue %q: history: %w", q, err)
				}
				return nil
			})
	}
	if err := fetch(r.Context(), calls...); err != nil {
		return err
	}

	v.Rows = make([]queueRow, len(queues))
	for i, q := range queues {
		hist := histories[i]
		v.Rows[i] = queueRow{
			Name: q, Stats: stats[i], Leader: fleets[i].Leader,
			Workers: len(fleets[i].Processes), Concurrency: fleets[i].Concurrency(),
			Spark: newSpark(seriesOf("processed", "s-proc", hist, processed), seriesOf("failed", "s-fail", hist, failed)),
			P50:   lag(hist, 0.5), P99: lag(hist, 0.99),
		}
	}
	sum := sumHistory(histories)
	v.Chart = newChart(sum, seriesOf("processed", "s-proc", sum, processed), seriesOf("failed", "s-fail", sum, failed))
	h.render(w, r, s, http.StatusOK, "overview", "Overview", "overview", v)
	return nil
}

// open serves GET /ui/open?queue=: the queue's page, for a principal that
// may not list the queues and names one.
func (h *Handler) open(w http.ResponseWriter, r *http.Request, s *session) error {
	queue := strings.TrimSpace(r.URL.Query().Get("queue"))
	var why string // why there is no queue to open
	switch invalid := worker.ValidateQueueName(queue); {
	case queue == "":
		why = "Enter the name of a queue to open."
	case invalid != nil:
		why = invalid.Error()
	default:
		seeOther(w, r, queueURL(queue))
		return nil
	}
	h.setFlash(w, r, s, flash{Text: why})
	seeOther(w, r, "/ui/")
	return nil
}

package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// queueView is a queue as GET /v1/queues and GET /v1/queues/{queue} show
// it: whether it is paused, sizes by state and the fleet that serves it.
type queueView struct {
	Name string `json:"name"`
	// Paused is set while workers claim none of the queue's jobs.
	Paused bool       `json:"paused"`
	Jobs   countsView `json:"jobs"`
	// Leader is the id of the leading process; null when none leads.
	Leader *string `json:"leader"`
	// Concurrency is the sum of the serving processes' concurrency.
	Concurrency int `json:"concurrency"`
	// RateLimit is the queue's limit as the leader (else the first process
	// that has one) reports it; null for none.
	RateLimit *string      `json:"rate_limit"`
	Workers   []workerView `json:"workers"`
}

type countsView struct {
	Scheduled int64 `json:"scheduled"`
	Ready     int64 `json:"ready"`
	Active    int64 `json:"active"`
	Dead      int64 `json:"dead"`
}

type workerView struct {
	ID          string    `json:"id"`
	Concurrency int       `json:"concurrency"`
	RateLimit   *string   `json:"rate_limit"`
	Leader      bool      `json:"leader"`
	SeenAt      time.Time `json:"seen_at"` // when the process last reported, by its clock
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
	out := struct {
		Queues []queueView `json:"queues"`
	}{Queues: make([]queueView, 0, len(names))}
	for _, name := range names {
		v, err := h.viewQueue(c.ctx, c.backend, name)
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
	v, err := h.viewQueue(c.ctx, c.backend, queue)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v, nil
}

// viewQueue reads a queue's state, sizes and fleet.
func (h *Handler) viewQueue(ctx context.Context, b Backend, name string) (queueView, error) {
	s, err := b.Stats(ctx, name)
	if err != nil {
		return queueView{}, err
	}
	v := queueView{
		Name:    name,
		Paused:  s.Paused,
		Jobs:    countsView{Scheduled: s.Scheduled, Ready: s.Ready, Active: s.Active, Dead: s.Dead},
		Workers: []workerView{},
	}
	f, err := b.Fleet(ctx, name)
	if err != nil {
		return queueView{}, err
	}
	if f.Leader != "" {
		v.Leader = &f.Leader
	}
	var limit, leaderLimit *string
	for _, p := range f.Processes {
		v.Concurrency += p.Concurrency
		wv := workerView{ID: p.ID, Concurrency: p.Concurrency, RateLimit: rateLimit(p.RateLimit), Leader: p.Leader, SeenAt: p.ReportedAt.UTC()}
		if limit == nil {
			limit = wv.RateLimit
		}
		if p.Leader || p.ID == f.Leader {
			leaderLimit = wv.RateLimit
		}
		v.Workers = append(v.Workers, wv)
	}
	v.RateLimit = limit
	if leaderLimit != nil {
		v.RateLimit = leaderLimit
	}
	return v, nil
}

func rateLimit(r worker.RateLimit) *string {
	if r == (worker.RateLimit{}) {
		return nil
	}
	s := r.String()
	return &s
}

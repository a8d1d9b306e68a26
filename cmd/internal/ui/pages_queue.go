package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// jobsPerPage is how many jobs a queue's page lists at once.
const jobsPerPage = 50

// states are the tabs of a queue's page, in order. The completed tab
// follows them when the queue holds completed jobs
// (queueView.ShowCompleted).
func states() []worker.State {
	return []worker.State{worker.StateReady, worker.StateScheduled, worker.StateActive, worker.StateDead, worker.StateCancelled}
}

// queueView is the data of a queue's page.
type queueView struct {
	Name  string
	URL   string // this page, with its query: where forms come back to
	Stats admin.QueueStats
	Fleet admin.Fleet
	Chart chart
	State worker.State
	Tabs  []tab
	Jobs  []*worker.Job
	Error string // the dead (or cancelled) jobs' filter
	First string // the first page's URL, when this is not it
	Next  string // the next page's URL, when there is one
	Form  enqueueForm
	// Reads: the principal may read the queue's counts, fleet and jobs
	// (GET /v1/queues/{queue} and …/jobs); without it the page holds
	// the find and enqueue forms only, and Note says why.
	Reads bool
	Note  string
	// Pause, Triage, Enqueue: the principal may pause and resume,
	// requeue and purge dead jobs, enqueue.
	Pause, Triage, Enqueue bool
	// ShowCompleted: the completed count and tab are shown, as the queue
	// holds completed jobs (or the completed tab is the one open).
	ShowCompleted bool
	// Served is what the queue's live processes serve; ShowKind: the
	// tables have a kind column, as a job listed has a kind; ShowKey: a
	// key column, as a job listed has a key.
	Served   kindsServed
	ShowKind bool
	ShowKey  bool
	// Keys are the queue's job keys with the most waiting jobs, KeysTotal
	// how many have any; shown when the principal may read them
	// (ReadKeys: GET /v1/queues/{queue}/keys).
	Keys      []keyRow
	KeysTotal int64
	ReadKeys  bool
	P50       string
	P99       string
}

// tab is one state's tab.
type tab struct {
	State  worker.State
	URL    string
	Count  int64
	Active bool
}

// queue serves GET /ui/queues/{queue}.
func (h *Handler) queue(w http.ResponseWriter, r *http.Request, s *session) error {
	return h.queuePage(w, r, s, http.StatusOK, nil, nil)
}

// queuePage renders a queue's page with status; form, when set, fills
// the enqueue form in (a refused enqueue, whose message is fl).
func (h *Handler) queuePage(w http.ResponseWriter, r *http.Request, s *session, status int, form *enqueueForm, fl *flash) error {
	queue, b, err := h.queueBackend(r)
	if err != nil {
		return err
	}
	query := r.URL.Query()
	v := queueView{Name: queue, URL: r.URL.RequestURI(), State: worker.State(query.Get("state")),
		Pause: h.may(s, routePause, queue), Triage: h.may(s, routeRequeue, queue), Enqueue: h.may(s, routeEnqueue, queue)}
	if r.Method != http.MethodGet {
		v.URL = queueURL(queue)
	}
	if form != nil {
		v.Form = *form
	}
	if err := h.permit(s, routeQueue, queue); err != nil {
		return h.limitedQueuePage(w, r, s, status, v, err, fl)
	}
	if err := h.permit(s, routeJobs, queue); err != nil {
		return h.limitedQueuePage(w, r, s, status, v, err, fl)
	}
	v.Reads = true
	if v.State == "" {
		v.State = worker.StateReady
	}
	if !isState(v.State) {
		return &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf("There is no state %q; the states are ready, scheduled, active, dead, cancelled and completed.", v.State)}
	}
	list := admin.JobListParams{Queue: queue, State: v.State, Cursor: query.Get("cursor"), Limit: jobsPerPage}
	if v.State == worker.StateDead || v.State == worker.StateCancelled {
		v.Error = query.Get("error")
		list.Dead.ErrorContains = v.Error
	}
	now := h.now()
	from, to := historySpan(now)
	var page admin.JobPage
	var hist []admin.HistoryMinute
	var keys admin.KeyList
	readKeys := func(context.Context) error { return nil }
	if v.ReadKeys = h.may(s, routeKeys, queue); v.ReadKeys {
		readKeys = func(ctx context.Context) (err error) {
			keys, err = b.Keys(ctx, queue, keysOnQueuePage)
			return wrap(queue, "keys", err)
		}
	}
	err = fetch(r.Context(), readKeys,
		func(ctx context.Context) error { return knownQueue(ctx, b, queue) },
		func(ctx context.Context) (err error) {
			v.Stats, err = b.Stats(ctx, queue)
			return wrap(queue, "stats", err)
		},
		func(ctx context.Context) (err error) {
			v.Fleet, err = b.Fleet(ctx, queue)
			return wrap(queue, "fleet", err)
		},
		func(ctx context.Context) (err error) {
			hist, err = h.history.history(ctx, b, queue, from, to, now)
			return wrap(queue, "history", err)
		},
		func(ctx context.Context) (err error) {
			page, err = b.Jobs(ctx, list)
			return wrap(queue, "list", err)
		},
	)
	if err != nil {
		var ve *worker.ValidationError
		if errors.As(err, &ve) && ve.Field == "Cursor" {
			return &pageError{status: http.StatusBadRequest, msg: "This page's cursor is not valid for this list; start from the first page."}
		}
		return err
	}
	v.Jobs = page.Jobs
	v.Served, v.ShowKind, v.ShowKey = servedBy(v.Fleet), anyKind(page.Jobs), anyKey(page.Jobs)
	v.Keys, v.KeysTotal = keyRows(queue, keys), keys.Total
	if list.Cursor != "" {
		v.First = tabURL(queue, string(v.State), "", v.Error)
	}
	if page.Next != "" {
		v.Next = tabURL(queue, string(v.State), page.Next, v.Error)
	}
	counts := map[worker.State]int64{worker.StateReady: v.Stats.Ready, worker.StateScheduled: v.Stats.Scheduled,
		worker.StateActive: v.Stats.Active, worker.StateDead: v.Stats.Dead, worker.StateCompleted: v.Stats.Completed, worker.StateCancelled: v.Stats.Cancelled}
	tabs := states()
	if v.ShowCompleted = v.Stats.Completed > 0 || v.State == worker.StateCompleted; v.ShowCompleted {
		tabs = append(tabs, worker.StateCompleted)
	}
	for _, st := range tabs {
		v.Tabs = append(v.Tabs, tab{State: st, URL: tabURL(queue, string(st), "", ""), Count: counts[st], Active: st == v.State})
	}
	v.Chart = newChart(hist, seriesOf("processed", "s-proc", hist, processed),
		seriesOf("failed", "s-fail", hist, failed), seriesOf("retried", "s-retry", hist, retried))
	v.P50, v.P99 = lag(hist, 0.5), lag(hist, 0.99)
	h.renderWith(w, r, s, status, "queue", "Queue "+queue, "", v, fl)
	return nil
}

// limitedQueuePage renders a queue's page for a principal that may not
// read the queue (refused says why): the find and enqueue forms only,
// and nothing read from Redis.
func (h *Handler) limitedQueuePage(w http.ResponseWriter, r *http.Request, s *session, status int, v queueView, refused error, fl *flash) error {
	var pe *pageError
	if !errors.As(refused, &pe) {
		return refused
	}
	v.Note = pe.msg
	h.renderWith(w, r, s, status, "queue", "Queue "+v.Name, "", v, fl)
	return nil
}

// wrap names the queue and the call of a Backend error.
func wrap(queue, call string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("queue %q: %s: %w", queue, call, err)
}

func isState(s worker.State) bool {
	return s == worker.StateCompleted || slices.Contains(states(), s)
}

// find serves GET /ui/queues/{queue}/find?id=: the job's page, or the
// queue's page saying there is no such job.
func (h *Handler) find(w http.ResponseWriter, r *http.Request, s *session) error {
	queue, b, err := h.queueBackend(r)
	if err != nil {
		return err
	}
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		h.setFlash(w, r, s, flash{Text: "Enter the id of a job to find."})
		seeOther(w, r, queueURL(queue))
		return nil
	}
	_, err = b.Get(r.Context(), queue, id)
	var ve *worker.ValidationError
	switch {
	case err == nil:
		seeOther(w, r, jobURL(queue, id))
		return nil
	case errors.Is(err, worker.ErrNotFound):
		h.setFlash(w, r, s, flash{Text: fmt.Sprintf("Queue %s has no job %s.", queue, strconv.Quote(id))})
	case errors.As(err, &ve):
		h.setFlash(w, r, s, flash{Text: err.Error()})
	default:
		return err
	}
	seeOther(w, r, queueURL(queue))
	return nil
}

package ui

import (
	"net/http"
	"net/url"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// selection is the dead (or cancelled: set) jobs a requeue or purge form
// selects: ids, or (all) every one whose last error contains errText,
// from cursor.
type selection struct {
	queue   string
	set     string // "dead" or "cancelled": the API's route and the words
	ids     []string
	all     bool
	errText string
	cursor  string
	back    string
}

// selectionOf reads a selection from a form (or, for the purge's
// confirmation page, a query): fields id (repeated), scope ("all" for
// every matching job), error, cursor, back and set ("cancelled", else
// dead).
func selectionOf(r *http.Request, form url.Values) (selection, error) {
	queue, err := queueName(r)
	if err != nil {
		return selection{}, err
	}
	sel := selection{queue: queue, all: form.Get("scope") == "all", errText: form.Get("error"),
		cursor: form.Get("cursor"), back: safeNext(form.Get("back")), set: "dead"}
	if form.Get("set") == "cancelled" {
		sel.set = "cancelled"
	}
	if !sel.all {
		sel.ids = form["id"]
	}
	return sel, nil
}

// body is the API's requeue or purge request of the selection.
func (sel selection) body(dryRun bool) map[string]any {
	body := map[string]any{}
	if sel.all {
		filter := map[string]any{}
		if sel.errText != "" {
			filter["error"] = sel.errText
		}
		body["filter"] = filter
		if sel.cursor != "" {
			body["cursor"] = sel.cursor
		}
	} else {
		body["ids"] = sel.ids
	}
	if dryRun {
		body["dry_run"] = true
	}
	return body
}

// deadURL is the queue's page of dead (or cancelled) jobs, filtered as
// the selection.
func (sel selection) deadURL() string {
	return tabURL(sel.queue, sel.set, "", sel.errText)
}

// confirmView is the data of the purge's confirmation page.
type confirmView struct {
	Queue     string
	Set       string // dead or cancelled
	Matched   int
	MoreMatch bool     // more dead jobs match than one purge handles
	Sample    []string // the first ids matched
	IDs       []string
	All       bool
	Error     string
	Cursor    string
	Back      string
	Cancel    string // where "Cancel" leads
	Failure   string // the dry run's error, from the API
}

// purgeConfirm serves GET /ui/queues/{queue}/purge: the confirmation page
// of the selection in the query.
func (h *Handler) purgeConfirm(w http.ResponseWriter, r *http.Request, s *session) error {
	sel, err := selectionOf(r, r.URL.Query())
	if err != nil {
		return err
	}
	return h.confirmPurge(w, r, s, sel)
}

// confirmPurge shows how many dead jobs a purge of sel would delete (a dry
// run through the API) and the button that purges them. The API's refusal
// (a producer's 403) is the page's status and message.
func (h *Handler) confirmPurge(w http.ResponseWriter, r *http.Request, s *session, sel selection) error {
	if len(sel.ids) == 0 && !sel.all {
		h.setFlash(w, r, s, flash{Text: "Select the " + sel.set + " jobs to purge first; nothing was changed."})
		seeOther(w, r, cancelURL(sel))
		return nil
	}
	reply, err := h.callAPI(r, s, http.MethodPost, apiPath(sel.queue, sel.set, "purge"), sel.body(true))
	if err != nil {
		return err
	}
	data := confirmView{Queue: sel.queue, Set: sel.set, IDs: sel.ids, All: sel.all, Error: sel.errText, Cursor: sel.cursor,
		Back: sel.back, Cancel: cancelURL(sel)}
	status := http.StatusOK
	if e, failed := reply.failed(); failed {
		status, data.Failure = reply.status, e.Message
	} else {
		var t wire.Triage
		if err := reply.decode(&t); err != nil {
			return err
		}
		data.Matched, data.MoreMatch, data.Sample = t.Matched, t.NextCursor != nil, t.Sample
	}
	h.render(w, r, s, status, "confirm", "Purge "+sel.set+" jobs of "+sel.queue, "", data)
	return nil
}

// cancelURL is where the confirmation page's Cancel leads: back, or the
// queue's dead jobs.
func cancelURL(sel selection) string {
	if sel.back != "" {
		return sel.back
	}
	return sel.deadURL()
}

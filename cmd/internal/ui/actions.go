package ui

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// The actions: each is one API request served on the session's principal
// (callAPI), then a flash and a redirect (POST/redirect/GET) to the form's
// back field, a page of the UI, or the queue's page.

// pause serves POST /ui/queues/{queue}/pause.
func (h *Handler) pause(w http.ResponseWriter, r *http.Request, s *session) error {
	return h.simple(w, r, s, http.MethodPost, "pause", "Paused queue %s")
}

// resume serves POST /ui/queues/{queue}/resume.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, s *session) error {
	return h.simple(w, r, s, http.MethodPost, "resume", "Resumed queue %s")
}

// simple sends an API request without a body on the queue's path plus
// segment and reports it with the message okFormat (of the queue).
func (h *Handler) simple(w http.ResponseWriter, r *http.Request, s *session, method, segment, okFormat string) error {
	queue, err := queueName(r)
	if err != nil {
		return err
	}
	reply, err := h.callAPI(r, s, method, apiPath(queue, segment), nil)
	if err != nil {
		return err
	}
	h.report(w, r, s, reply, flash{OK: true, Text: fmt.Sprintf(okFormat, queue)}, queueURL(queue))
	return nil
}

// cancel serves POST /ui/queues/{queue}/cancel (form field id).
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request, s *session) error {
	queue, err := queueName(r)
	if err != nil {
		return err
	}
	id := r.PostFormValue("id")
	if id == "" {
		h.setFlash(w, r, s, flash{Text: "No job id given: nothing was cancelled."})
		seeOther(w, r, back(r, queueURL(queue)))
		return nil
	}
	reply, err := h.callAPI(r, s, http.MethodDelete, apiPath(queue, "jobs", id), nil)
	if err != nil {
		return err
	}
	text := fmt.Sprintf("Cancelled job %s (if it was running, its handler was told to stop); it is kept as cancelled", id)
	h.report(w, r, s, reply, flash{OK: true, Text: text}, queueURL(queue))
	return nil
}

// enqueue serves POST /ui/queues/{queue}/enqueue: the form's fields as
// the API's job object. A refused job shows the queue's page again with
// the form as it was filled in and the API's message.
func (h *Handler) enqueue(w http.ResponseWriter, r *http.Request, s *session) error {
	queue, err := queueName(r)
	if err != nil {
		return err
	}
	form := enqueueFormOf(r)
	reply, err := h.callAPI(r, s, http.MethodPost, apiPath(queue, "jobs"), form.body())
	if err != nil {
		return err
	}
	if e, failed := reply.failed(); failed {
		return h.queuePage(w, r, s, reply.status, &form, &flash{Text: e.Message})
	}
	var res struct {
		ID      string `json:"id"`
		Warning string `json:"warning"`
	}
	if err := reply.decode(&res); err != nil {
		return err
	}
	// A warning: stored all the same, but nothing may ever run it.
	h.setFlash(w, r, s, flash{OK: true, Text: "Enqueued job " + res.ID, Link: jobURL(queue, res.ID), LinkText: "show it", Warning: res.Warning})
	seeOther(w, r, back(r, queueURL(queue)))
	return nil
}

// enqueueForm is the enqueue form as filled in.
type enqueueForm struct {
	ID, Kind, Key, Payload, Delay, Priority, UniqueKey, MaxAttempts string
}

func enqueueFormOf(r *http.Request) enqueueForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return enqueueForm{ID: v("id"), Kind: v("kind"), Key: v("key"), Payload: r.PostFormValue("payload"), Delay: v("delay"),
		Priority: v("priority"), UniqueKey: v("unique_key"), MaxAttempts: v("max_attempts")}
}

// body is the API's job object of f. A payload that parses as JSON is
// sent as JSON; any other as its bytes (payload_base64), lines ending in
// \n rather than the browser's \r\n. Fields left empty are left out, and
// the API checks the rest, so its messages name what is wrong.
func (f enqueueForm) body() map[string]any {
	body := map[string]any{}
	switch p := strings.TrimSpace(f.Payload); {
	case p == "":
	case json.Valid([]byte(p)):
		body["payload"] = json.RawMessage(p)
	default:
		text := strings.ReplaceAll(f.Payload, "\r\n", "\n")
		body["payload_base64"] = base64.StdEncoding.EncodeToString([]byte(text))
	}
	set := func(k, v string) {
		if v != "" {
			body[k] = v
		}
	}
	set("id", f.ID)
	set("kind", f.Kind)
	set("key", f.Key)
	set("delay", f.Delay)
	set("priority", f.Priority)
	set("unique_key", f.UniqueKey)
	if n, err := strconv.Atoi(f.MaxAttempts); err == nil {
		body["max_attempts"] = n
	} else {
		set("max_attempts", f.MaxAttempts) // a string: the API says what it wants
	}
	return body
}

// requeue serves POST /ui/queues/{queue}/requeue: the selected dead jobs
// (form fields id), or with scope=all every dead job whose error contains
// the field error (from cursor, continuing an earlier requeue).
func (h *Handler) requeue(w http.ResponseWriter, r *http.Request, s *session) error {
	sel, err := selectionOf(r, r.PostForm)
	if err != nil {
		return err
	}
	if len(sel.ids) == 0 && !sel.all {
		h.setFlash(w, r, s, flash{Text: "Select the " + sel.set + " jobs to requeue first; nothing was changed."})
		seeOther(w, r, back(r, sel.deadURL()))
		return nil
	}
	reply, err := h.callAPI(r, s, http.MethodPost, apiPath(sel.queue, sel.set, "requeue"), sel.body(false))
	if err != nil {
		return err
	}
	f, err := triageFlash(reply, sel, "Requeued")
	if err != nil {
		return err
	}
	h.report(w, r, s, reply, f, sel.deadURL())
	return nil
}

// purge serves POST /ui/queues/{queue}/purge: the selection of requeue,
// deleted, once confirmed (confirm=yes); without it, the confirmation
// page, with a dry run's count.
func (h *Handler) purge(w http.ResponseWriter, r *http.Request, s *session) error {
	sel, err := selectionOf(r, r.PostForm)
	if err != nil {
		return err
	}
	if r.PostFormValue("confirm") != "yes" {
		return h.confirmPurge(w, r, s, sel)
	}
	reply, err := h.callAPI(r, s, http.MethodPost, apiPath(sel.queue, sel.set, "purge"), sel.body(false))
	if err != nil {
		return err
	}
	f, err := triageFlash(reply, sel, "Purged")
	if err != nil {
		return err
	}
	h.report(w, r, s, reply, f, sel.deadURL())
	return nil
}

// triageFlash is the flash of a successful requeue or purge ("Requeued 3
// dead jobs"), with the continuation when more jobs match; a zero flash
// when the request failed (report shows the API's error).
func triageFlash(reply apiReply, sel selection, verb string) (flash, error) {
	if _, failed := reply.failed(); failed {
		return flash{}, nil
	}
	var t wire.Triage
	if err := reply.decode(&t); err != nil {
		return flash{}, err
	}
	f := flash{OK: true, Text: fmt.Sprintf("%s %s", verb, jobCount(t.Changed, sel.set))}
	if t.Matched > t.Changed {
		f.Text += fmt.Sprintf(" (%d of the %d matched were no longer %s)", t.Matched-t.Changed, t.Matched, sel.set)
	}
	if len(sel.ids) > 0 && t.Matched == 0 {
		f = flash{Text: fmt.Sprintf("%s nothing: no selected job is %s any more", verb, sel.set)}
	}
	if t.NextCursor != nil {
		f.Text += "; more " + sel.set + " jobs match than one request handles"
		f.More = &more{Action: strings.ToLower(string(t.Action)), Queue: sel.queue, Set: sel.set, Error: sel.errText, Cursor: *t.NextCursor}
	}
	return f, nil
}

// jobCount is "1 dead job" or "n dead jobs" (set: "dead" or "cancelled").
func jobCount(n int, set string) string {
	if n == 1 {
		return "1 " + set + " job"
	}
	return formatCount(int64(n)) + " " + set + " jobs"
}

// report ends an action: on the API's error, an error flash with its
// message; else ok. Then the browser goes back (or to fallback).
func (h *Handler) report(w http.ResponseWriter, r *http.Request, s *session, reply apiReply, ok flash, fallback string) {
	if e, failed := reply.failed(); failed {
		ok = flash{Text: e.Message}
	}
	h.setFlash(w, r, s, ok)
	seeOther(w, r, back(r, fallback))
}

// back is where an action sends the browser: the form's back field when
// it is a page of the UI, else fallback.
func back(r *http.Request, fallback string) string {
	if b := safeNext(r.PostFormValue("back")); b != "" {
		return b
	}
	return fallback
}

package ui

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Job keys: a queue's page shows its keys with the most waiting jobs
// (keysOnQueuePage), the keys page more of them and a form to open any
// key, and a key's page its jobs waiting and running, its limits and,
// for a principal the API lets change them, the form that sets or resets
// them (PUT and DELETE /v1/queues/{queue}/keys/{key}).

// Bounds of the lists of keys.
const (
	// keysOnQueuePage is how many keys a queue's page shows.
	keysOnQueuePage = 10
	// keysPerPage is how many keys the keys page shows.
	keysPerPage = 100
)

// keyRow is a key of queue as the pages show it (wire.Key's fields).
type keyRow struct {
	Queue, Name             string
	Waiting, Ready, Running int64
	// Concurrency is the key's own cap; nil: the queue's.
	Concurrency *int
	Weight      int
	// RateLimit is the key's own rate limit; nil: the queue's, "": none.
	RateLimit    *string
	AtCap        bool
	LimitedUntil time.Time
}

// rowOf is s, a key of queue, as the pages show it.
func rowOf(queue string, s admin.KeyStats) keyRow {
	k := wire.KeyOf(s)
	return keyRow{Queue: queue, Name: k.Key, Waiting: k.Waiting, Ready: k.Ready, Running: k.Running, Concurrency: k.Concurrency, Weight: k.Weight,
		RateLimit: k.RateLimit, AtCap: k.AtCap, LimitedUntil: s.LimitedUntil}
}

// keyRows are the rows of l's keys, of queue.
func keyRows(queue string, l admin.KeyList) []keyRow {
	rows := make([]keyRow, len(l.Keys))
	for i, k := range l.Keys {
		rows[i] = rowOf(queue, k)
	}
	return rows
}

// anyKey reports whether a job of jobs has a key: the page's tables then
// have a key column.
func anyKey(jobs []*worker.Job) bool {
	return slices.ContainsFunc(jobs, func(j *worker.Job) bool { return j.Key != "" })
}

// capText is a key's cap in a table: its own, "none" for no cap, or the
// queue's key_concurrency.
func capText(c *int) string { return wire.CapCell(c, formatCount) }

// keysView is the data of the keys page.
type keysView struct {
	Queue string
	Keys  []keyRow
	Total int64
	// Key is the open form's key, as typed (a key refused stays there).
	Key string
}

// keys serves GET /ui/queues/{queue}/keys: the queue's keys with the
// most waiting jobs, and the form that opens one by name (?key=, which
// leads to the key's page).
func (h *Handler) keys(w http.ResponseWriter, r *http.Request, s *session) error {
	queue, b, err := h.queueBackend(r)
	if err != nil {
		return err
	}
	v := keysView{Queue: queue, Key: strings.TrimSpace(r.URL.Query().Get("key"))}
	var fl *flash
	if r.URL.Query().Has("key") {
		err := validKey(v.Key)
		if err == nil {
			seeOther(w, r, keyURL(queue, v.Key))
			return nil
		}
		fl = &flash{Text: upperFirst(err.Error()) + "."}
	}
	l, err := b.Keys(r.Context(), queue, keysPerPage)
	if err != nil {
		return wrap(queue, "keys", err)
	}
	v.Keys, v.Total = keyRows(queue, l), l.Total
	status := http.StatusOK
	if fl != nil {
		status = http.StatusBadRequest
	}
	h.renderWith(w, r, s, status, "keys", "Keys of queue "+queue, "", v, fl)
	return nil
}

// validKey checks a job key (worker.ValidateKey), naming it "key" as the
// API does.
func validKey(key string) error {
	err := worker.ValidateKey(key)
	var ve *worker.ValidationError
	if errors.As(err, &ve) {
		ve.Field = "key"
	}
	return err
}

// keyView is the data of a key's page.
type keyView struct {
	Queue string
	Key   keyRow
	// Form is the limits form as filled in: the key's limits, or a refused
	// change as it was typed.
	Form keyForm
	// SetLimits, Reset: the principal may set and reset the key's limits.
	SetLimits, Reset bool
}

// keyForm is the limits form as filled in: "" is the default; a rate
// limit of "none" is no limit.
type keyForm struct {
	Concurrency, Weight, RateLimit string
}

// noRate is the rate limit field's word for no limit (the API's "").
const noRate = "none"

// formOf is the form showing limits l.
func formOf(l admin.KeyLimits) keyForm {
	var f keyForm
	if l.Concurrency >= 0 {
		f.Concurrency = strconv.Itoa(l.Concurrency)
	}
	if l.Weight > 0 {
		f.Weight = strconv.Itoa(l.Weight)
	}
	if r := l.RateLimit; r != nil {
		f.RateLimit = cmp.Or(r.String(), noRate)
	}
	return f
}

// key serves GET /ui/queues/{queue}/keys/{key...}.
func (h *Handler) key(w http.ResponseWriter, r *http.Request, s *session) error {
	return h.keyPage(w, r, s, http.StatusOK, nil, nil)
}

// keyPage renders a key's page with status; form, when set, fills the
// limits form in (a refused change, whose message is fl).
func (h *Handler) keyPage(w http.ResponseWriter, r *http.Request, s *session, status int, form *keyForm, fl *flash) error {
	queue, b, err := h.queueBackend(r)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	if r.Method != http.MethodGet {
		key = r.PostFormValue("key")
	}
	if err := validKey(key); err != nil {
		return &pageError{status: http.StatusBadRequest, msg: upperFirst(err.Error()) + "."}
	}
	st, err := b.Key(r.Context(), queue, key)
	if err != nil {
		return wrap(queue, "key", err)
	}
	v := keyView{Queue: queue, Key: rowOf(queue, st), Form: formOf(st.Limits),
		SetLimits: h.may(s, routeSetKey, queue), Reset: h.may(s, routeResetKey, queue)}
	if form != nil {
		v.Form = *form
	}
	h.renderWith(w, r, s, status, "key", "Key "+key, "", v, fl)
	return nil
}

// setKeyLimits serves POST /ui/queues/{queue}/limits: the form's key,
// concurrency and weight as PUT /v1/queues/{queue}/keys/{key} (a field
// left empty is the default). A refused change shows the key's page
// again with the form as it was filled in and the API's message.
func (h *Handler) setKeyLimits(w http.ResponseWriter, r *http.Request, s *session) error {
	queue, err := queueName(r)
	if err != nil {
		return err
	}
	key := r.PostFormValue("key")
	form := keyForm{Concurrency: strings.TrimSpace(r.PostFormValue("concurrency")), Weight: strings.TrimSpace(r.PostFormValue("weight")),
		RateLimit: strings.TrimSpace(r.PostFormValue("rate_limit"))}
	reply, err := h.callAPI(r, s, http.MethodPut, apiPath(queue, "keys", key), form.body())
	if err != nil {
		return err
	}
	return h.keyReply(w, r, s, reply, &form, "Set the limits of key %s: %s, weight %d, %s")
}

// resetKeyLimits serves POST /ui/queues/{queue}/limits/reset: DELETE
// /v1/queues/{queue}/keys/{key} of the form's key.
func (h *Handler) resetKeyLimits(w http.ResponseWriter, r *http.Request, s *session) error {
	queue, err := queueName(r)
	if err != nil {
		return err
	}
	reply, err := h.callAPI(r, s, http.MethodDelete, apiPath(queue, "keys", r.PostFormValue("key")), nil)
	if err != nil {
		return err
	}
	return h.keyReply(w, r, s, reply, nil, "Reset the limits of key %s: %s, weight %d, %s")
}

// keyReply ends a change of a key's limits: on the API's error, the key's
// page again with its message (and form, when set, as filled in); on
// success, a flash saying the limits the key is left with (okFormat, of
// the key, its cap, weight and rate limit) and the key's page.
func (h *Handler) keyReply(w http.ResponseWriter, r *http.Request, s *session, reply apiReply, form *keyForm, okFormat string) error {
	if e, failed := reply.failed(); failed {
		if e.Field == "queue" || e.Field == "key" || reply.status == http.StatusForbidden || reply.status == http.StatusUnauthorized {
			// No key's page to show the form on, or no right to see it.
			return &pageError{status: reply.status, msg: upperFirst(e.Message) + "."}
		}
		return h.keyPage(w, r, s, reply.status, form, &flash{Text: upperFirst(e.Message) + "."})
	}
	var k wire.Key
	if err := reply.decode(&k); err != nil {
		return err
	}
	queue, _ := queueName(r) // checked by the caller
	h.setFlash(w, r, s, flash{OK: true, Text: fmt.Sprintf(okFormat, k.Key, wire.CapPhrase(k.Concurrency), k.Weight, wire.RatePhrase(k.RateLimit))})
	seeOther(w, r, keyURL(queue, k.Key))
	return nil
}

// body is the API's limits object of f: a field left empty is left out
// (the default); a number that is not a whole number is sent as it was
// typed, so that the API's message says what it wants.
func (f keyForm) body() map[string]any {
	body := map[string]any{}
	for name, v := range map[string]string{"concurrency": f.Concurrency, "weight": f.Weight} {
		switch n, err := strconv.Atoi(v); {
		case v == "":
		case err == nil:
			body[name] = n
		default:
			body[name] = v
		}
	}
	switch {
	case f.RateLimit == "":
	case strings.EqualFold(f.RateLimit, noRate):
		body["rate_limit"] = ""
	default:
		body["rate_limit"] = f.RateLimit
	}
	return body
}

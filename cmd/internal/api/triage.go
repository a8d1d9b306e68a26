package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Bounds of a requeue or purge request.
const (
	// TriageMax is the most dead jobs one requeue or purge request
	// matches: a larger selection is answered with next_cursor, which the
	// next request sends back as cursor. 10,000 jobs are 10 script calls
	// (40 with an error filter, of about a millisecond each), well within a
	// request's time.
	TriageMax = 10_000
	// maxTriageIDs is the most ids a request selects, as
	// admin.TriageParams takes them.
	maxTriageIDs = 1000
	// triageBodyBytes bounds a request's body: maxTriageIDs ids of the
	// longest, escaped, and a filter and a cursor.
	triageBodyBytes = 1 << 20
)

// triageKeys are the fields of a requeue or purge body.
var triageKeys = []string{"ids", "filter", "dry_run", "cursor", "max"}

// POST /v1/queues/{queue}/dead/requeue and …/dead/purge: the dead jobs of
// the body's ids or filter (none: every dead job), at most TriageMax (or
// the body's max) matched per request.
func (h *Handler) triage(action admin.TriageAction) func(c *call) (int, any, error) {
	return h.triageOf(worker.StateDead, action)
}

// POST /v1/queues/{queue}/cancelled/requeue and …/cancelled/purge: as
// triage, on the cancelled jobs (state).
func (h *Handler) triageOf(state worker.State, action admin.TriageAction) func(c *call) (int, any, error) {
	return func(c *call) (int, any, error) {
		queue, apiErr := pathQueue(c.r)
		if apiErr != nil {
			return 0, nil, apiErr
		}
		body, apiErr := readBody(c.w, c.r, triageBodyBytes)
		if apiErr != nil {
			return 0, nil, apiErr
		}
		p, apiErr := decodeTriage(body, h.triageMax)
		if apiErr != nil {
			return 0, nil, apiErr
		}
		p.Queue, p.Action, p.State = queue, action, state
		res, err := c.backend.Triage(c.ctx, p)
		if err != nil {
			if res.Matched == 0 || res.Next == "" {
				return 0, nil, err
			}
			// The walk got somewhere before it failed: the reply says how
			// far, and the request that continues it meets the error (or
			// not, if it has passed).
			h.log.Warn("api "+string(action)+" stopped early", "route", c.r.Pattern, "token", c.ident.name, "matched", res.Matched, "err", err)
		}
		return http.StatusOK, wire.TriageOf(action, p.DryRun, res), nil
	}
}

// decodeTriage reads the body of a requeue or purge: empty, or {"ids":
// [...]} or {"filter": {"error", "died_after", "died_before"}}, with
// "dry_run", "cursor" and "max" (at least 1, at most bound, which is the
// default): all of the triage but its queue and action, which are the
// route's.
func decodeTriage(body []byte, bound int) (admin.TriageParams, *Error) {
	p := admin.TriageParams{Max: bound}
	if len(bytes.TrimSpace(body)) == 0 {
		return p, nil // every dead job
	}
	if err := checkBody(body); err != nil {
		return p, err
	}
	var hasFilter bool
	err := decodeObject(body, func(dec *json.Decoder) *Error {
		return readObject(dec, "", rawMember(func(key string, raw json.RawMessage) *Error {
			if isNull(raw) && slices.Contains(triageKeys, key) {
				return nil // null: as if left out
			}
			var err *Error
			switch key {
			case "ids":
				p.IDs, err = triageIDs(raw)
			case "filter":
				p.Filter, err = deadFilter(raw)
				hasFilter = true
			case "dry_run":
				p.DryRun, err = boolField(key, raw)
			case "cursor":
				p.Cursor, err = stringField(key, raw)
			case "max":
				// Beyond the bound is the bound: a client need not know it.
				if p.Max, err = intField(key, raw); err == nil && p.Max < 1 {
					err = invalidField(key, fmt.Sprintf("must be a whole number from 1, or left out for %d (got %s)", bound, raw))
				}
				p.Max = min(p.Max, bound)
			default:
				err = unknownField(fieldName("", key), strings.Join(triageKeys, ", "))
			}
			return err
		}))
	})
	if err == nil && p.IDs != nil && hasFilter {
		err = invalidField("filter", "give ids or filter, not both")
	}
	return p, err
}

// triageIDs reads the ids of a selection: 1 to maxTriageIDs valid ids.
func triageIDs(raw json.RawMessage) ([]string, *Error) {
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, invalidField("ids", "must be a list of job ids, not "+kind(raw))
	}
	switch {
	case len(items) == 0:
		return nil, invalidField("ids", fmt.Sprintf("must hold 1 to %d ids; leave it out for every dead job", maxTriageIDs))
	case len(items) > maxTriageIDs:
		return nil, apiError(wire.CodeTooLarge, "ids", fmt.Sprintf("holds %d ids; the limit per request is %d", len(items), maxTriageIDs))
	}
	ids := make([]string, len(items))
	for i, item := range items {
		id, err := idField("ids["+strconv.Itoa(i)+"]", item)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// deadFilter reads the filter of a selection.
func deadFilter(raw json.RawMessage) (admin.DeadFilter, *Error) {
	var f admin.DeadFilter
	var after, before string
	err := decodeObject(raw, func(dec *json.Decoder) *Error {
		return readObject(dec, "filter.", rawMember(func(key string, raw json.RawMessage) *Error {
			field := fieldName("filter.", key)
			var err *Error
			switch key {
			case "error":
				if !isNull(raw) {
					f.ErrorContains, err = stringField(field, raw)
				}
			case "died_after":
				if !isNull(raw) {
					after, err = stringField(field, raw)
				}
			case "died_before":
				if !isNull(raw) {
					before, err = stringField(field, raw)
				}
			default:
				err = unknownField(field, "error, died_after, died_before")
			}
			return err
		}))
	})
	if err != nil {
		return f, err
	}
	f.DiedAfter, f.DiedBefore, err = diedRange("filter.", after, before)
	return f, err
}

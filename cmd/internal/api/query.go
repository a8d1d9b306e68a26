package api

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// listStates are the states GET /v1/queues/{queue}/jobs lists.
var listStates = []worker.State{worker.StateScheduled, worker.StateReady, worker.StateActive, worker.StateDead, worker.StateCompleted, worker.StateCancelled}

// listQuery reads ?state=&cursor=&limit=&error=&died_after=&died_before=
// of GET /v1/queues/{queue}/jobs (all but the queue, which is the
// path's): state is required, and the filters are for state=dead and
// state=cancelled only.
func listQuery(rawQuery string) (admin.JobListParams, *Error) {
	var q admin.JobListParams
	values, err := queryValues(rawQuery, "state", "cursor", "limit", "error", "died_after", "died_before")
	if err != nil {
		return q, err
	}
	state, ok := values["state"]
	if !ok {
		return q, invalidField("state", "is required: scheduled, ready, active, dead, completed or cancelled")
	}
	if q.State = worker.State(state); !slices.Contains(listStates, q.State) {
		return q, invalidField("state", fmt.Sprintf("must be scheduled, ready, active, dead, completed or cancelled (got %q)", state))
	}
	q.Cursor = values["cursor"]
	if q.Limit, err = limitParam(values); err != nil {
		return q, err
	}
	for _, key := range []string{"error", "died_after", "died_before"} {
		if _, ok := values[key]; ok && q.State != worker.StateDead && q.State != worker.StateCancelled {
			return q, invalidField(key, fmt.Sprintf("filters dead and cancelled jobs only: give it with state=dead or state=cancelled (got state=%s)", q.State))
		}
	}
	q.Dead.ErrorContains = values["error"]
	q.Dead.DiedAfter, q.Dead.DiedBefore, err = diedRange("", values["died_after"], values["died_before"])
	return q, err
}

// limitParam reads the limit parameter of a page; 0 when not given.
func limitParam(values map[string]string) (int, *Error) {
	v, ok := values["limit"]
	if !ok {
		return 0, nil
	}
	n, convErr := strconv.Atoi(v)
	if convErr != nil || n < 1 || n > admin.ListLimitMax {
		return 0, invalidField("limit", fmt.Sprintf("must be a whole number from 1 to %d (got %q)", admin.ListLimitMax, v))
	}
	return n, nil
}

// queryValues reads a query string of the known parameters, each given
// once at most.
func queryValues(rawQuery string, known ...string) (map[string]string, *Error) {
	values, err := parseQuery(rawQuery)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(values))
	for _, key := range slices.Sorted(maps.Keys(values)) {
		switch vs := values[key]; {
		case !slices.Contains(known, key):
			return nil, apiError(wire.CodeUnknownField, key, "unknown query parameter "+key+" (known: "+strings.Join(known, ", ")+")")
		case len(vs) > 1:
			return nil, invalidField(key, "appears more than once")
		default:
			out[key] = vs[0]
		}
	}
	return out, nil
}

func parseQuery(raw string) (url.Values, *Error) {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil, invalidField("query", "malformed query string: "+err.Error())
	}
	return values, nil
}

// noQuery refuses query parameters on a route that takes none.
func noQuery(rawQuery string) *Error {
	if rawQuery == "" {
		return nil
	}
	values, err := parseQuery(rawQuery)
	if err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(values)) {
		return apiError(wire.CodeUnknownField, key, "unknown query parameter "+key+" (this route takes none)")
	}
	return nil
}

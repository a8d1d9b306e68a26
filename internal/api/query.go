package api

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/seed-53d105c9/courier/worker"
)

// deadQuery reads ?cursor=&limit= of GET /v1/queues/{queue}/dead.
func deadQuery(rawQuery string) (worker.DeadQuery, *Error) {
	var q worker.DeadQuery
	values, err := parseQuery(rawQuery)
	if err != nil {
		return q, err
	}
	for key, vs := range values {
		if len(vs) > 1 {
			return q, invalidField(key, "appears more than once")
		}
		v := vs[0]
		switch key {
		case "cursor":
			q.Cursor = v
		case "limit":
			n, convErr := strconv.Atoi(v)
			if convErr != nil || n < 1 || n > worker.DeadLimitMax {
				return q, invalidField(key, fmt.Sprintf("must be a whole number from 1 to %d (got %q)", worker.DeadLimitMax, v))
			}
			q.Limit = n
		default:
			return q, apiError(CodeUnknownField, key, "unknown query parameter "+key+" (known: cursor, limit)")
		}
	}
	return q, nil
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
		return apiError(CodeUnknownField, key, "unknown query parameter "+key+" (this route takes none)")
	}
	return nil
}

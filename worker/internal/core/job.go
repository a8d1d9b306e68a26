package core

import "time"

// timeTokens is the smallest claim token that is a time: tokens of
// versions before the state hash came from a counter, below it (see
// lua/record.lua, OLD_TOKEN); later ones are the Redis clock in µs.
const timeTokens = 1e15

// StartedAt returns when the attempt with claim token claim was claimed
// (worker.Job.StartedAt); zero when the job is not active (claim 0) or the
// token is not a time.
func StartedAt(claim int64) time.Time {
	if claim < timeTokens {
		return time.Time{}
	}
	return time.UnixMicro(claim)
}

// KindHeader is the header a job's kind travels in (worker.JobSpec.Kind):
// a kind is stored with the job's other headers, so a job without one
// keeps its record as it was. Header names beginning with ReservedHeaders
// are Courier's own.
const (
	KindHeader      = "courier.kind"
	ReservedHeaders = "courier."
)

// SplitKind returns the kind carried in headers h and the headers without
// it, as a handler and a read see them: h itself when it has no kind, nil
// when the kind was its only header.
func SplitKind(h map[string]string) (kind string, rest map[string]string) {
	kind, ok := h[KindHeader]
	if !ok {
		return "", h
	}
	if len(h) == 1 {
		return kind, nil
	}
	rest = make(map[string]string, len(h)-1)
	for k, v := range h {
		if k != KindHeader {
			rest[k] = v
		}
	}
	return kind, rest
}

// WithKind returns headers h with kind added, in a copy; h when kind is
// empty.
func WithKind(h map[string]string, kind string) map[string]string {
	if kind == "" {
		return h
	}
	out := make(map[string]string, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out[KindHeader] = kind
	return out
}

package store

import (
	"strconv"
	"strings"
	"time"
)

// Progress is what a running attempt last reported of its progress. It
// rides in the job's claims value, after the process:
//
//	claims[id] = "<token>@<process>\n<percent>;<updated_ms>;" + message
//
// so it leaves with the claim (ack, retry, recover, cancel, hand-back
// delete the claims entry anyway) and is written by the lease extension
// (extend.lua), in the call that renews the lease: a report costs no round
// trip of its own. Readers of older versions take the process up to the end
// of the value and show the progress as part of it.
type Progress struct {
	Percent   float64 // 0 to 100
	Message   string
	UpdatedAt time.Time // the Redis clock when the extension stored it
}

// Renewal is one running job for Extend: its token and, when the handler
// reported progress since the last renewal, that progress (nil: keep what
// is stored).
type Renewal struct {
	Token    Token
	Progress *Progress
}

// encodeProgress is the "<percent>;" + message argument of extend.lua.
func encodeProgress(p *Progress) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(p.Percent, 'f', -1, 64) + ";" + p.Message
}

// splitWorker splits the process part of a claims value (what follows the
// '@') into the process id and the progress stored after it, nil when none
// (or when it does not parse: progress is informational).
func splitWorker(v string) (string, *Progress) {
	proc, prog, ok := strings.Cut(v, "\n")
	if !ok {
		return v, nil
	}
	pct, rest, ok1 := strings.Cut(prog, ";")
	ms, msg, ok2 := strings.Cut(rest, ";")
	p, err1 := strconv.ParseFloat(pct, 64)
	t, err2 := strconv.ParseInt(ms, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return proc, nil
	}
	return proc, &Progress{Percent: p, Message: msg, UpdatedAt: time.UnixMilli(t)}
}

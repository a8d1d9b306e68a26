package store

import (
	"math"
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

// MaxReportBytes bounds a progress report as extend.lua takes it, the
// percent, its ';' and the message together.
const MaxReportBytes = 512

// NormalPercent is the one rule of a progress percent, which Go and
// extend.lua share: a number from 0 to 100, kept to two decimals, with -0
// as 0. It returns percent so, or false for NaN, an infinity and anything
// below 0 or above 100. Sent as strconv.FormatFloat(p, 'f', -1, 64), such a
// percent is what extend.lua stores: a plain decimal ("12.5", no sign nor
// exponent) of at most 100.
func NormalPercent(percent float64) (float64, bool) {
	if math.IsNaN(percent) || percent < 0 || percent > 100 {
		return 0, false
	}
	p := math.Round(percent*100) / 100
	if p == 0 {
		p = 0 // -0 (and what rounds to it) is 0: "-0" is no plain decimal
	}
	return p, true
}

// Normal returns p as extend.lua stores it, its percent by NormalPercent,
// and false for a report extend.lua would drop (a bad percent, a message
// with a newline, over MaxReportBytes with its percent), which is not sent.
func (p Progress) Normal() (Progress, bool) {
	pct, ok := NormalPercent(p.Percent)
	p.Percent = pct
	return p, ok && len(formatPercent(pct))+1+len(p.Message) <= MaxReportBytes && !strings.Contains(p.Message, "\n")
}

// formatPercent is a normal percent as extend.lua takes it.
func formatPercent(pct float64) string { return strconv.FormatFloat(pct, 'f', -1, 64) }

// encodeProgress is the "<percent>;" + message argument of extend.lua, and
// false for no report, or one that is not sent (Normal).
func encodeProgress(p *Progress) (string, bool) {
	if p == nil {
		return "", false
	}
	n, ok := p.Normal()
	if !ok {
		return "", false
	}
	return formatPercent(n.Percent) + ";" + n.Message, true
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

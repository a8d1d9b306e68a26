package chaos

import (
	"fmt"
	"strings"
	"time"
)

// Bound is what a scenario promises about one figure.
type Bound int

// The bounds.
const (
	// Zero: any count above zero breaks the promise.
	Zero Bound = iota
	// Shown: the figure is measured and reported; it may be above zero
	// (bounded by what Redis or the fault itself allows).
	Shown
)

// Promise is what Courier promises in a scenario: that no acknowledged job
// is lost, that none is delivered twice, and that no two workers run a job
// at once (overlap; a worker cut off from Redis stops its jobs before their
// lease ends). No duplicates implies no overlap.
type Promise struct {
	Lost       Bound
	Duplicates Bound
	Overlaps   Bound
}

// String says the promise in a table cell: "lost=0 dup=0",
// "lost=0 overlap=0", "shown".
func (p Promise) String() string {
	var parts []string
	if p.Lost == Zero {
		parts = append(parts, "lost=0")
	}
	if p.Duplicates == Zero {
		parts = append(parts, "dup=0")
	} else if p.Overlaps == Zero {
		parts = append(parts, "overlap=0")
	}
	if len(parts) == 0 {
		return "shown"
	}
	return strings.Join(parts, " ")
}

// The verdicts of a scenario.
const (
	VerdictPass   = "pass"
	VerdictFail   = "FAIL"
	VerdictKnown  = "known failing" // failed, and listed as failing until its issue 12 fix lands
	VerdictError  = "ERROR"         // the suite could not run the scenario as designed
	VerdictNotRun = "not run"       // left out of this run, said so in the table
)

// Result is one scenario's outcome.
type Result struct {
	Scenario string        `json:"scenario"`
	Fault    string        `json:"fault"`
	Promise  string        `json:"promise"`
	Verdict  string        `json:"verdict"`
	Broken   []string      `json:"broken,omitempty"` // the promises broken, in words
	Known    string        `json:"known_failing,omitempty"`
	Error    string        `json:"error,omitempty"`
	FailsRun bool          `json:"fails_run"` // this result makes the run exit non-zero
	Elapsed  time.Duration `json:"elapsed_ns"`
	Tally

	promise Promise
	ran     bool
}

// judge sets r's verdict from its tally and promise. A scenario that ran no
// fault or enqueued nothing proved nothing: an error. A known failure fails
// the run unless allowKnown.
func (r *Result) judge(allowKnown bool) {
	r.Promise = r.promise.String()
	r.Broken = nil
	r.FailsRun = false
	switch {
	case !r.ran:
		r.Verdict = VerdictNotRun
		return
	case r.Error != "":
		r.Verdict, r.FailsRun = VerdictError, true
		return
	case r.Jobs == 0:
		r.Verdict, r.Error, r.FailsRun = VerdictError, "no enqueue was acknowledged", true
		return
	case len(r.Faults) == 0:
		r.Verdict, r.Error, r.FailsRun = VerdictError, "no fault was injected", true
		return
	}
	r.Broken = append(r.Broken, r.Anomalies...)
	if r.promise.Lost == Zero && r.Lost > 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("%d acknowledged jobs lost", r.Lost))
	}
	if r.promise.Duplicates == Zero && r.Duplicates > 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("%d duplicate deliveries on a graceful path", r.Duplicates))
	}
	if (r.promise.Overlaps == Zero || r.promise.Duplicates == Zero) && r.Overlaps > 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("%d requests overlapped another of the same job: two workers ran it at once", r.Overlaps))
	}
	switch {
	case len(r.Broken) == 0:
		r.Verdict = VerdictPass
	case r.Known != "":
		r.Verdict, r.FailsRun = VerdictKnown, !allowKnown
	default:
		r.Verdict, r.FailsRun = VerdictFail, true
	}
}

// Failed reports whether r makes the run fail.
func (r *Result) Failed() bool { return r.FailsRun }

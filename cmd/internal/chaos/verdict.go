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
// lease ends). No duplicates implies no overlap. The other fields add
// promises some scenarios make; their zero values promise nothing.
type Promise struct {
	Lost       Bound
	Duplicates Bound
	Overlaps   Bound
	// Confirmed narrows Lost to the jobs whose enqueue a replica confirmed
	// (worker.Durability): a failover may lose the others, and they are
	// shown.
	Confirmed bool
	// NoErrors: the producer saw no error (Tally.ProducerErrors = 0).
	NoErrors bool
	// Resume, when set, bounds the time from when the suite saw the
	// partitions an episode cut off served again (a replica promoted)
	// until their processing resumed: Courier's part of a failover, the
	// rest (detecting the failure, electing the replica) being Redis's.
	Resume time.Duration
	// Spread: each master's share of the delivered jobs is within
	// spreadTolerance of an equal share.
	Spread bool
	// Ready, when set, bounds the time from when Redis answered again (a
	// restart, a replica promoted) until each daemon an episode restarted
	// while Redis could not serve it answered /readyz 200.
	Ready time.Duration
	// KeyCaps (a scenario with job keys): no key had more requests in
	// flight than its cap, and no slot is held once the queue is idle.
	KeyCaps bool
}

// spreadTolerance is how far, in points of share, a master's share of a
// partitioned queue's jobs may be from an equal one (1/3 ± 0.10 for three
// masters): the ids the producer makes are hashed to partitions, so the
// shares are as even as the hash makes them, a point or two apart.
const spreadTolerance = 0.10

// String says the promise in a table cell: "lost=0 dup=0",
// "lost=0 overlap=0", "confirmed lost=0", "lost=0 dup=0 err=0", "shown".
// Resume and Spread are in the notes under the table.
func (p Promise) String() string {
	var parts []string
	switch {
	case p.Lost == Zero && p.Confirmed:
		parts = append(parts, "confirmed lost=0")
	case p.Lost == Zero:
		parts = append(parts, "lost=0")
	}
	if p.Duplicates == Zero {
		parts = append(parts, "dup=0")
	} else if p.Overlaps == Zero {
		parts = append(parts, "overlap=0")
	}
	if p.NoErrors {
		parts = append(parts, "err=0")
	}
	if p.KeyCaps {
		parts = append(parts, "caps")
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
	switch {
	case r.promise.Lost == Zero && r.promise.Confirmed && r.LostConfirmed > 0:
		r.Broken = append(r.Broken, fmt.Sprintf("%d jobs lost whose enqueue a replica confirmed", r.LostConfirmed))
	case r.promise.Lost == Zero && !r.promise.Confirmed && r.Lost > 0:
		r.Broken = append(r.Broken, fmt.Sprintf("%d acknowledged jobs lost", r.Lost))
	}
	if r.promise.Duplicates == Zero && r.Duplicates > 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("%d duplicate deliveries on a graceful path", r.Duplicates))
	}
	if (r.promise.Overlaps == Zero || r.promise.Duplicates == Zero) && r.Overlaps > 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("%d requests overlapped another of the same job: two workers ran it at once", r.Overlaps))
	}
	if r.promise.KeyCaps && r.CapViolations > 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("%d requests took a key above its cap", r.CapViolations))
	}
	if r.promise.KeyCaps && r.LeakedSlots != 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("%d key slots held once the queue was idle (leaked)", r.LeakedSlots))
	}
	if r.promise.NoErrors && r.ProducerErrors > 0 {
		r.Broken = append(r.Broken, fmt.Sprintf("the producer saw %d errors", r.ProducerErrors))
	}
	r.Broken = append(r.Broken, r.promise.resumeBroken(r.Faults)...)
	r.Broken = append(r.Broken, r.promise.readyBroken(r.Faults)...)
	if r.promise.Spread {
		r.Broken = append(r.Broken, spreadBroken(r.Spread)...)
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

// resumeBroken says which episodes that cut partitions off broke the
// promised time to resume, or never saw them resume.
func (p Promise) resumeBroken(faults []FaultReport) []string {
	if p.Resume <= 0 {
		return nil
	}
	var out []string
	for _, f := range faults {
		switch {
		case len(f.Partitions) == 0:
		case f.Resume <= 0:
			out = append(out, fmt.Sprintf("processing of partitions %s never resumed after %s %s at +%s",
				intList(f.Partitions), f.Kind, f.Target, roundDur(f.Start)))
		case f.resumeAfterBack() > p.Resume:
			out = append(out, fmt.Sprintf("processing of partitions %s resumed %s after they were served again (%s after %s %s), more than the promised %s",
				intList(f.Partitions), seconds(f.resumeAfterBack()), seconds(f.Resume), f.Kind, f.Target, seconds(p.Resume)))
		}
	}
	return out
}

// readyBroken says which episodes restarted a daemon that was not ready
// within the promised time of Redis answering again; no episode that
// measured it breaks the promise too.
func (p Promise) readyBroken(faults []FaultReport) []string {
	if p.Ready <= 0 {
		return nil
	}
	var out []string
	measured := false
	for _, f := range faults {
		for _, r := range f.Ready {
			measured = true
			if r > p.Ready {
				out = append(out, fmt.Sprintf("a daemon restarted during %s %s at +%s was ready %s after Redis answered again, more than the promised %s",
					f.Kind, f.Target, roundDur(f.Start), seconds(r), seconds(p.Ready)))
			}
		}
	}
	if !measured {
		out = append(out, "no daemon's time to ready after Redis answered again was measured")
	}
	return out
}

// spreadBroken says which masters' shares of the jobs are not within
// spreadTolerance of an equal share; no shares measured breaks it too.
func spreadBroken(shares []Share) []string {
	if len(shares) == 0 {
		return []string{"the spread of the jobs over the masters was not measured"}
	}
	even := 1 / float64(len(shares))
	var out []string
	for _, s := range shares {
		if s.Jobs < even-spreadTolerance || s.Jobs > even+spreadTolerance {
			out = append(out, fmt.Sprintf("master %s ran %s of the jobs; an even share is %s ± %s",
				s.Master, percent(s.Jobs), percent(even), percent(spreadTolerance)))
		}
	}
	return out
}

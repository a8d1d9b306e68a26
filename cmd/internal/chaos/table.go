package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// tableColumns are the table's headers; numbers are right-aligned.
var tableColumns = []struct {
	name  string
	right bool
}{
	{"scenario", false}, {"jobs", true}, {"delivered", true}, {"dup", true},
	{"dead", true}, {"lost", true}, {"recover", true}, {"promise", false}, {"result", false},
}

// WriteTable writes the results as one plain-text table, columns aligned,
// then a few lines per scenario: its fault, samples of duplicate and lost
// ids, and what went wrong.
func WriteTable(w io.Writer, results []Result) {
	rows := [][]string{}
	for _, r := range results {
		rows = append(rows, tableRow(r))
	}
	widths := make([]int, len(tableColumns))
	header := make([]string, len(tableColumns))
	for i, c := range tableColumns {
		header[i] = c.name
		widths[i] = len(c.name)
	}
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	writeRow(w, header, widths)
	for _, row := range rows {
		writeRow(w, row, widths)
	}
	fmt.Fprintln(w)
	for _, r := range results {
		writeNotes(w, r)
	}
}

func writeRow(w io.Writer, cells []string, widths []int) {
	out := make([]string, len(cells))
	for i, cell := range cells {
		pad := strings.Repeat(" ", widths[i]-len(cell))
		if tableColumns[i].right {
			out[i] = pad + cell
		} else {
			out[i] = cell + pad
		}
	}
	fmt.Fprintln(w, strings.TrimRight(strings.Join(out, "  "), " "))
}

// tableRow is one scenario's row. A scenario left out (judged
// VerdictNotRun exactly when it did not run) has no figures; one that
// errored has no recovery time.
func tableRow(r Result) []string {
	if !r.ran {
		return []string{r.Scenario, "-", "-", "-", "-", "-", "-", r.Promise, "not run: " + r.Error}
	}
	result := r.Verdict
	if r.Verdict == VerdictKnown {
		result = "FAIL (known, issue 12)"
	}
	recovered := seconds(r.Recover)
	if r.Verdict == VerdictError {
		recovered = "-"
	}
	return []string{r.Scenario, itoa(r.Jobs), itoa(r.Delivered), itoa(r.Duplicates), itoa(r.Dead),
		itoa(r.Lost), recovered, r.Promise, result}
}

// WriteFailures writes one line per scenario that fails the run, with what
// broke or why it could not run: the last lines of the output say why the
// run failed, even where only its tail is kept (a CI log).
func WriteFailures(w io.Writer, results []Result) {
	for _, r := range results {
		if !r.Failed() {
			continue
		}
		why := slices.Clone(r.Broken)
		if r.Error != "" {
			why = append([]string{r.Error}, why...)
		}
		fmt.Fprintf(w, "failed: %s (%s): %s\n", r.Scenario, r.Verdict, strings.Join(why, "; "))
	}
}

// writeNotes writes what a reader of the table needs to trust a row.
func writeNotes(w io.Writer, r Result) {
	if !r.ran {
		return
	}
	fmt.Fprintf(w, "%s: %s; %d episodes in %s\n", r.Scenario, r.Fault, len(r.Faults), roundDur(r.Elapsed))
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
	}
	for _, b := range r.Broken {
		fmt.Fprintf(w, "  broken: %s\n", b)
	}
	writeEpisodes(w, r.Faults)
	writeResumes(w, r.Faults, r.promise.Resume)
	writeReady(w, r.Faults, r.promise.Ready)
	writeSpread(w, r.Spread)
	if r.promise.KeyCaps {
		fmt.Fprintf(w, "  keys: %d requests above a key's cap (at most %d of one key in flight), %d slots held once the queue was idle\n", r.CapViolations, r.KeyPeak, r.LeakedSlots)
	}
	if r.Confirmed+r.Unconfirmed > 0 {
		fmt.Fprintf(w, "  enqueues: %d confirmed by a replica, %d not (stored on the master only, or found stored after a failed call); lost: %d confirmed, %d not\n",
			r.Confirmed, r.Unconfirmed, r.LostConfirmed, r.LostUnconfirmed)
	}
	if r.Known != "" && len(r.Broken) > 0 {
		fmt.Fprintf(w, "  known failing: %s\n", r.Known)
	}
	if r.Known != "" && len(r.Broken) == 0 && r.Error == "" {
		fmt.Fprintf(w, "  marked known failing but passed this time; once its fix has landed, drop the mark (Scenario.Known)\n")
	}
	for _, d := range r.DupSamples {
		fmt.Fprintf(w, "  duplicate %s: %s; after %s\n", d.ID, strings.Join(d.Deliveries, ", "), d.After)
	}
	if r.Lost > 0 {
		var where []string
		for st, n := range r.LostByState {
			where = append(where, fmt.Sprintf("%d %s", n, st))
		}
		var ids []string
		for _, s := range r.LostSamples {
			ids = append(ids, s.ID+" ("+s.State+")")
		}
		fmt.Fprintf(w, "  lost: %s in Redis after the drain; e.g. %s\n", strings.Join(sortedStrings(where), ", "), strings.Join(ids, ", "))
	}
	var extra []string
	if r.Overlaps > 0 {
		extra = append(extra, fmt.Sprintf("%d requests overlapped another of the same job (two workers ran it at once; e.g. %s)",
			r.Overlaps, strings.Join(r.OverlapIDs, ", ")))
	}
	if r.DeliveredDead > 0 {
		extra = append(extra, fmt.Sprintf("%d delivered and then dead", r.DeliveredDead))
	}
	if r.Unacked > 0 {
		extra = append(extra, fmt.Sprintf("%d delivered whose enqueue was never acknowledged", r.Unacked))
	}
	if r.Resolved > 0 {
		extra = append(extra, fmt.Sprintf("%d enqueues with an unknown outcome resolved", r.Resolved))
	}
	if r.Refused > 0 {
		extra = append(extra, fmt.Sprintf("%d enqueue calls refused", r.Refused))
	}
	if r.Abandoned > 0 {
		extra = append(extra, fmt.Sprintf("%d enqueues abandoned (not counted)", r.Abandoned))
	}
	if r.Aborted > 0 {
		extra = append(extra, fmt.Sprintf("%d requests cancelled by their sender", r.Aborted))
	}
	if r.ProducerErrors > 0 || r.promise.NoErrors {
		extra = append(extra, fmt.Sprintf("%d errors seen by the producer", r.ProducerErrors))
	}
	if len(extra) > 0 {
		fmt.Fprintf(w, "  %s\n", strings.Join(extra, "; "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// writeEpisodes writes the slowest recovery and the episodes' own notes.
func writeEpisodes(w io.Writer, faults []FaultReport) {
	var worst FaultReport
	for _, f := range faults {
		if f.Recover > worst.Recover {
			worst = f
		}
	}
	if worst.Recover > 0 {
		fmt.Fprintf(w, "  slowest recovery: %s after %s %s at +%s\n",
			seconds(worst.Recover), worst.Kind, worst.Target, roundDur(worst.Start))
	}
	noted := 0
	for _, f := range faults {
		if f.Note == "" {
			continue
		}
		if noted++; noted > sampleMax {
			fmt.Fprintf(w, "  ... and %d more episodes\n", len(faults)-sampleMax)
			break
		}
		fmt.Fprintf(w, "  episode at +%s, %s %s: %s\n", roundDur(f.Start), f.Kind, f.Target, f.Note)
	}
}

// writeResumes writes, for each episode that cut partitions off, when
// their processing resumed, against the promised bound (0: none).
func writeResumes(w io.Writer, faults []FaultReport, bound time.Duration) {
	for _, f := range faults {
		if len(f.Partitions) == 0 {
			continue
		}
		promise := ""
		if bound > 0 {
			promise = "; promised within " + seconds(bound) + " of that"
		}
		switch {
		case f.Back == 0:
			fmt.Fprintf(w, "  partitions %s: not served again after %s %s at +%s\n",
				intList(f.Partitions), f.Kind, f.Target, roundDur(f.Start))
		case f.Resume == 0:
			fmt.Fprintf(w, "  partitions %s: served again %s after %s %s at +%s, but no job of theirs delivered since%s\n",
				intList(f.Partitions), seconds(f.Back-f.Start), f.Kind, f.Target, roundDur(f.Start), promise)
		default:
			fmt.Fprintf(w, "  partitions %s: processing resumed %s after %s %s at +%s; served again after %s, resumed %s later%s\n",
				intList(f.Partitions), seconds(f.Resume), f.Kind, f.Target, roundDur(f.Start),
				seconds(f.Back-f.Start), seconds(f.resumeAfterBack()), promise)
		}
	}
}

// writeReady writes, for each episode that restarted daemons while Redis
// could not serve them, how soon each was ready once Redis answered again,
// against the promised bound (0: none).
func writeReady(w io.Writer, faults []FaultReport, bound time.Duration) {
	for _, f := range faults {
		if len(f.Ready) == 0 {
			continue
		}
		times := make([]string, len(f.Ready))
		for i, r := range f.Ready {
			times[i] = roundDur(r).String()
		}
		promise := ""
		if bound > 0 {
			promise = " (promised within " + seconds(bound) + ")"
		}
		fmt.Fprintf(w, "  %s %s at +%s: daemons ready %s after Redis answered again at +%s%s\n",
			f.Kind, f.Target, roundDur(f.Start), strings.Join(times, ", "), roundDur(f.Back), promise)
	}
}

// writeSpread writes each master's share of a partitioned queue's work.
func writeSpread(w io.Writer, shares []Share) {
	if len(shares) == 0 {
		return
	}
	fmt.Fprintf(w, "  spread over the masters (jobs, script calls, CPU of the master and its replica):\n")
	for _, s := range shares {
		fmt.Fprintf(w, "    %s (partitions %s): %d jobs %s, calls %s, CPU %s (%.2f s)\n",
			s.Master, intList(s.Partitions), s.Delivered, percent(s.Jobs), percent(s.Calls), percent(s.CPU), s.CPUSeconds)
	}
}

// Report is the machine-readable output of a run (-json).
type Report struct {
	Mode    string        `json:"mode"` // "short" or "full"
	Elapsed time.Duration `json:"elapsed_ns"`
	Failed  bool          `json:"failed"`
	Results []Result      `json:"results"`
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func itoa(n int) string { return strconv.Itoa(n) }

// seconds formats d as seconds with one decimal: "3.2s".
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s" }

// percent formats a share (0-1) as a percentage with one decimal: "33.3%".
func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// intList formats numbers as "0, 5"; "none" when there are none.
func intList(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

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

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

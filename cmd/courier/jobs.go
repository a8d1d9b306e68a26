package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// listFlags maps the library's JobListParams fields to the flags of the
// commands that list jobs.
var listFlags = map[string]string{
	"Queue": "--queue", "State": "--state", "Limit": "--limit", "Cursor": "--cursor",
	"Dead": "--error", "ErrorContains": "--error", "DiedAfter": "--newer-than", "DiedBefore": "--older-than",
}

// states are the states courier jobs list takes, in lifecycle order.
var states = []string{string(worker.StateScheduled), string(worker.StateReady), string(worker.StateActive), string(worker.StateDead),
	string(worker.StateCompleted), string(worker.StateCancelled)}

// defineJobs is courier jobs list: a page of a queue's jobs in one state.
func defineJobs(fs *flag.FlagSet, _ string) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	state := choiceFlag(fs, "state", "the `state` listed: scheduled, ready, active, dead, completed or cancelled (required)", states...)
	page := addPageFlags(fs)
	filter := addDeadFilterFlags(fs, "list")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *queue == "" || *state == "" {
			return usagef("--queue and --state are required")
		}
		if !strings.Contains(" "+strings.Join(states, " ")+" ", " "+*state+" ") {
			return &usageError{field: "--state", msg: fmt.Sprintf("--state must be %s (got %q)", strings.Join(states, ", "), *state)}
		}
		if err := page.check(); err != nil {
			return err
		}
		q := admin.JobListParams{Queue: *queue, State: worker.State(*state), Cursor: page.cursor, Limit: page.limit}
		f, err := filter.filter(time.Now())
		if err != nil {
			return err
		}
		if !f.IsZero() && q.State != worker.StateDead && q.State != worker.StateCancelled {
			return usagef("--error, --older-than and --newer-than filter dead and cancelled jobs: they need --state dead or --state cancelled")
		}
		q.Dead = f
		client, closeClient, err := af.dial(ctx, fs, cf)
		if err != nil {
			return err
		}
		defer closeClient()
		return listJobs(ctx, client, q, *asJSON, std)
	}
}

// pageFlags are --limit and --cursor.
type pageFlags struct {
	limit  int
	cursor string
}

func addPageFlags(fs *flag.FlagSet) *pageFlags {
	p := &pageFlags{}
	fs.IntVar(&p.limit, "limit", admin.ListLimitDefault, fmt.Sprintf("jobs per page, 1 to %d", admin.ListLimitMax))
	fs.StringVar(&p.cursor, "cursor", "", "continue after a previous page (printed at its end)")
	return p
}

// check refuses a --limit out of its bounds (the library would take 0
// for its default).
func (p *pageFlags) check() error {
	if p.limit < 1 || p.limit > admin.ListLimitMax {
		return &usageError{field: "--limit", msg: fmt.Sprintf("--limit must be 1 to %d (got %d)", admin.ListLimitMax, p.limit)}
	}
	return nil
}

// deadFilterFlags select dead jobs by their last error and their age.
type deadFilterFlags struct {
	errorText            string
	olderThan, newerThan time.Duration
}

// addDeadFilterFlags adds --error, --older-than and --newer-than; verb
// says what the command does with the jobs they select.
func addDeadFilterFlags(fs *flag.FlagSet, verb string) *deadFilterFlags {
	f := &deadFilterFlags{}
	fs.StringVar(&f.errorText, "error", "", verb+" only dead jobs whose last error contains this text (ASCII case ignored)")
	fs.DurationVar(&f.olderThan, "older-than", 0, verb+" only jobs that died more than this long ago, e.g. 24h")
	fs.DurationVar(&f.newerThan, "newer-than", 0, verb+" only jobs that died less than this long ago, e.g. 15m")
	return f
}

// filter is the library's filter of the flags, ages counted back from now.
func (f *deadFilterFlags) filter(now time.Time) (admin.DeadFilter, error) {
	for name, d := range map[string]time.Duration{"--older-than": f.olderThan, "--newer-than": f.newerThan} {
		if d < 0 {
			return admin.DeadFilter{}, &usageError{field: name, msg: fmt.Sprintf("%s must not be negative (got %s)", name, d)}
		}
	}
	out := admin.DeadFilter{ErrorContains: f.errorText}
	if f.olderThan > 0 {
		out.DiedBefore = now.Add(-f.olderThan)
	}
	if f.newerThan > 0 {
		out.DiedAfter = now.Add(-f.newerThan)
	}
	return out, nil
}

// listJobs prints a page of queue's jobs: a table whose columns suit the
// state, or with asJSON the API's page.
// A filtered page may hold fewer jobs than --limit, none even, and still
// end with a cursor: the filter looked at a bounded number of dead jobs.
func listJobs(ctx context.Context, client admin.Operator, q admin.JobListParams, asJSON bool, std streams) error {
	page, err := client.Jobs(ctx, q)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(std.out, wire.PageOf(page.Jobs, page.Next))
	}
	if err := printJobs(std.out, q.State, page.Jobs); err != nil {
		return err
	}
	if page.Next != "" {
		fmt.Fprintf(std.out, "more: --cursor %s\n", printable(page.Next))
	}
	return nil
}

// printJobs prints jobs in a table whose columns suit their state; a
// KIND column follows the id when a job of the page has a kind, and a KEY
// column when one has a key.
func printJobs(w io.Writer, state worker.State, jobs []*worker.Job) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	kinds := slices.ContainsFunc(jobs, func(j *worker.Job) bool { return j.Kind != "" })
	keys := slices.ContainsFunc(jobs, func(j *worker.Job) bool { return j.Key != "" })
	row := func(j *worker.Job, format string, args ...any) {
		cells := []any{printable(j.ID)}
		lead := ""
		if kinds {
			lead += "%s\t"
			cells = append(cells, printable(orNone(j.Kind)))
		}
		if keys {
			lead += "%s\t"
			cells = append(cells, printable(orNone(j.Key)))
		}
		fmt.Fprintf(tw, "%s\t"+lead+format+"\n", append(cells, args...)...)
	}
	header := func(columns string) {
		if keys {
			columns = "KEY\t" + columns
		}
		if kinds {
			columns = "KIND\t" + columns
		}
		fmt.Fprintln(tw, "ID\t"+columns)
	}
	switch state {
	case worker.StateActive:
		header("WORKER\tSTARTED\tLEASE UNTIL\tATTEMPT\tPROGRESS")
		for _, j := range jobs {
			row(j, "%s\t%s\t%s\t%d\t%s", printable(orNone(j.Worker)), stampOrDash(j.StartedAt), stamp(j.LeaseUntil), j.Attempt,
				progressCell(j.Progress))
		}
	case worker.StateCompleted:
		header("FINISHED AT\tATTEMPTS\tRESULT")
		for _, j := range jobs {
			row(j, "%s\t%d\t%s", stamp(j.FinishedAt), j.Attempt, resultCell(j.Result))
		}
	case worker.StateDead:
		header("DIED AT\tATTEMPTS\tLAST ERROR")
		for _, j := range jobs {
			row(j, "%s\t%d\t%s", stamp(j.DiedAt), j.Attempt, printable(oneLine(j.LastError, 100)))
		}
	default:
		header("PRIORITY\tRUN AT\tATTEMPTS\tLAST ERROR")
		for _, j := range jobs {
			row(j, "%s\t%s\t%d\t%s", j.Priority, stamp(j.RunAt), j.Attempt, printable(oneLine(j.LastError, 60)))
		}
	}
	return tw.Flush()
}

// progressCell is an active job's progress in a table: its percent and
// the start of its message; "-" when it reported none.
func progressCell(p *worker.Progress) string {
	if p == nil {
		return "-"
	}
	cell := percent(p.Percent)
	if p.Message != "" {
		cell += " " + printable(oneLine(p.Message, 40))
	}
	return cell
}

// resultCell is a completed job's result in a table: its start, quoted
// as payloads are (see preview); "-" when it has none.
func resultCell(r []byte) string {
	if len(r) == 0 {
		return "-"
	}
	return quoted(r, 60)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func stampOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return stamp(t)
}

package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// triageFlags maps the library's fields to the flags of dead requeue and
// dead purge.
var triageFlags = map[string]string{
	"Queue": "--queue", "ID": "--job", "IDs": "--job", "Cursor": "--cursor", "State": "--state",
	"Filter": "--error", "ErrorContains": "--error", "DiedAfter": "--newer-than", "DiedBefore": "--older-than",
}

// keptStates are the states courier dead works on (--state): the dead
// jobs, and the cancelled ones, which are triaged alike.
var keptStates = []string{string(worker.StateDead), string(worker.StateCancelled)}

// addKeptStateFlag defines --state of courier dead: dead (the default) or
// cancelled.
func addKeptStateFlag(fs *flag.FlagSet) *string {
	s := choiceFlag(fs, "state", "the `state` worked on: dead (default) or cancelled", keptStates...)
	*s = string(worker.StateDead)
	return s
}

// defineDead is courier dead list|requeue|purge; each action has its own
// flags.
func defineDead(fs *flag.FlagSet, action string) runFunc {
	if action == "list" {
		return defineDeadList(fs)
	}
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	state := addKeptStateFlag(fs)
	var ids idList
	fs.Var(&ids, "job", "a dead (or cancelled) job to "+action+"; repeat for more")
	idsFile := fs.String("ids-file", "", "a file of job ids to "+action+", one per line (- = stdin)")
	filter := addDeadFilterFlags(fs, action)
	all := fs.Bool("all", false, action+" every dead (or cancelled) job of the queue")
	dryRun := fs.Bool("dry-run", false, "count and show what would be "+past(action)+"; change nothing")
	yes := new(bool)
	if action == string(admin.TriagePurge) {
		yes = fs.Bool("yes", false, "purge --all without asking (it asks on a terminal, and needs --yes elsewhere)")
	}
	cursor := fs.String("cursor", "", "resume a walk that stopped (printed when it does)")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *queue == "" {
			return usagef("--queue is required")
		}
		if *idsFile != "" {
			more, err := readIDs(*idsFile, std.in)
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
		f, err := filter.filter(time.Now())
		if err != nil {
			return err
		}
		ways := 0
		for _, given := range []bool{len(ids) > 0 || *idsFile != "", !f.IsZero(), *all} {
			if given {
				ways++
			}
		}
		if ways != 1 {
			return usagef("select the dead (or cancelled) jobs one way: --job ID (or --ids-file F), a filter (--error, --older-than, --newer-than), or --all")
		}
		if *idsFile != "" && len(ids) == 0 {
			return &usageError{field: "--ids-file", msg: fmt.Sprintf("--ids-file %s holds no id", *idsFile)}
		}
		for _, id := range ids {
			if err := worker.ValidateID(id); err != nil {
				return err // a usage error naming --job (see classify)
			}
		}
		client, closeClient, err := af.dial(ctx, fs, cf)
		if err != nil {
			return err
		}
		defer closeClient()
		if action == string(admin.TriagePurge) && *all && !*dryRun && !*yes {
			if err := confirmPurgeAll(ctx, client, *queue, *state, std); err != nil {
				return err
			}
		}
		res, err := client.Triage(ctx, admin.TriageParams{Queue: *queue, State: worker.State(*state), Action: admin.TriageAction(action),
			IDs: ids, Filter: f, DryRun: *dryRun, Cursor: *cursor})
		if err != nil {
			if res.Next != "" {
				fmt.Fprintf(std.err, "courier dead %s: stopped after %d job(s); resume with --cursor %s\n", action, res.Matched, printable(res.Next))
			}
			return err
		}
		switch {
		case len(ids) == 1 && res.Matched == 0:
			return &explainedError{cause: worker.ErrNotFound, msg: fmt.Sprintf("queue %q has no %s job %q; nothing was changed", *queue, *state, ids[0])}
		case len(ids) > 1 && res.Matched == 0:
			return &explainedError{cause: worker.ErrNotFound, msg: fmt.Sprintf("queue %q has none of these %d jobs in its %s set; nothing was changed", *queue, len(ids), *state)}
		}
		if *asJSON {
			return writeJSON(std.out, wire.TriageOf(admin.TriageAction(action), *dryRun, res))
		}
		printTriage(std.out, action, *queue, *state, *dryRun, len(ids), res)
		return nil
	}
}

// defineDeadList is courier dead list, courier jobs list --state dead (or
// --state cancelled).
func defineDeadList(fs *flag.FlagSet) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	state := addKeptStateFlag(fs)
	page := addPageFlags(fs)
	filter := addDeadFilterFlags(fs, "list")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *queue == "" {
			return usagef("--queue is required")
		}
		if err := page.check(); err != nil {
			return err
		}
		f, err := filter.filter(time.Now())
		if err != nil {
			return err
		}
		client, closeClient, err := af.dial(ctx, fs, cf)
		if err != nil {
			return err
		}
		defer closeClient()
		q := admin.JobListParams{Queue: *queue, State: worker.State(*state), Cursor: page.cursor, Limit: page.limit, Dead: f}
		return listJobs(ctx, client, q, *asJSON, std)
	}
}

// confirmPurgeAll asks, on a terminal, before every dead (or cancelled:
// state) job of queue is deleted; elsewhere it asks for --yes.
func confirmPurgeAll(ctx context.Context, client admin.Operator, queue, state string, std streams) error {
	in, ok := std.in.(*os.File)
	if !ok || !isTerminal(in) {
		return &usageError{field: "--yes", msg: "purge --all deletes every " + state + " job: give --yes to confirm (stdin is not a terminal to ask on), or --dry-run to count them"}
	}
	s, err := client.Stats(ctx, queue)
	if err != nil {
		return err
	}
	n := s.Dead
	if state == string(worker.StateCancelled) {
		n = s.Cancelled
	}
	fmt.Fprintf(std.err, "Delete all %d %s job(s) of queue %s? This cannot be undone. [y/N] ", n, state, printable(queue))
	answer, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return fmt.Errorf("not confirmed; nothing was purged")
	}
	return nil
}

// printTriage says what a requeue or purge did, or would do.
func printTriage(w io.Writer, action, queue, state string, dryRun bool, asked int, r admin.TriageResult) {
	verb, n := past(action), r.Changed
	if dryRun {
		verb, n = "would "+action, r.Matched
	}
	fmt.Fprintf(w, "%s %d %s job(s) of queue %s", verb, n, state, printable(queue))
	if asked > r.Matched {
		fmt.Fprintf(w, " (%d of the ids given were not %s)", asked-r.Matched, state)
	}
	fmt.Fprintln(w)
	if dryRun && len(r.Sample) > 0 {
		shown := make([]string, len(r.Sample))
		for i, id := range r.Sample {
			shown[i] = printable(id)
		}
		fmt.Fprintf(w, "first: %s\n", strings.Join(shown, " "))
	}
}

func past(action string) string {
	return map[admin.TriageAction]string{admin.TriageRequeue: "requeued", admin.TriagePurge: "purged"}[admin.TriageAction(action)]
}

// idList is a flag that may be repeated: --job a --job b.
type idList []string

func (l *idList) String() string      { return strings.Join(*l, ",") }
func (l *idList) Set(id string) error { *l = append(*l, id); return nil }

// maxIDsFile bounds what --ids-file reads: 1,000 ids of up to 256 bytes.
const maxIDsFile = 1000 * 258

// readIDs reads ids, one per line (blank lines skipped), from path or,
// for "-", from in.
func readIDs(path string, in io.Reader) ([]string, error) {
	r := in
	if path != "-" {
		f, err := os.Open(path) // #nosec G304 G703 -- the file the user named with --ids-file
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxIDsFile+1))
	if err != nil {
		return nil, fmt.Errorf("--ids-file %s: %w", path, err)
	}
	if len(data) > maxIDsFile {
		return nil, &usageError{field: "--ids-file", msg: fmt.Sprintf("--ids-file %s is over %d bytes: give at most %d ids a call", path, maxIDsFile, admin.ListLimitMax)}
	}
	var ids []string
	for line := range strings.Lines(string(data)) {
		if id := strings.TrimRight(line, "\r\n"); strings.TrimSpace(id) != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// oneLine shortens s to one line of at most n characters, white space
// runs (newlines included) made one space. It is cut before printable
// escapes it, so that a cut never splits an escape; invalid bytes are kept
// for printable to show.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	kept := 0
	for i := range s {
		if kept == n-1 {
			return s[:i] + "…"
		}
		kept++
	}
	return s
}

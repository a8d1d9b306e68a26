package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// defineInspect is courier inspect: every queue, one queue, or one job.
func defineInspect(fs *flag.FlagSet, _ string) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "show this queue only, with its workers (default: every known queue)")
	job := fs.String("job", "", "show this job of --queue")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *job != "" && *queue == "" {
			return usagef("--job needs --queue")
		}
		client, closeClient, err := af.dial(ctx, fs, cf)
		if err != nil {
			return err
		}
		defer closeClient()
		if *job != "" {
			j, err := client.Get(ctx, *queue, *job)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(std.out, wire.JobOf(j))
			}
			printJob(std.out, j)
			return nil
		}
		queues := []string{*queue}
		if *queue == "" {
			if queues, err = allQueues(ctx, client); err != nil {
				return err
			}
			slices.Sort(queues)
		}
		views := make([]wire.Queue, 0, len(queues))
		for _, q := range queues {
			v, err := readQueue(ctx, client, q)
			var ve *worker.ValidationError
			if *queue == "" && errors.As(err, &ve) {
				// A name the server listed, not one the user typed.
				return fmt.Errorf("a listed queue: %s", ve.Error())
			}
			if err != nil {
				return err
			}
			views = append(views, v)
		}
		switch {
		case *asJSON && *queue != "":
			return writeJSON(std.out, views[0]) // as GET /v1/queues/{queue}
		case *asJSON:
			return writeJSON(std.out, struct { // as GET /v1/queues
				Queues []wire.Queue `json:"queues"`
			}{views})
		}
		if *queue != "" {
			return printQueue(std, views[0])
		}
		return printQueues(std.out, views)
	}
}

// printQueues prints a row per queue: state, sizes (completed: the
// finished jobs it retains), workers, leader.
func printQueues(w io.Writer, views []wire.Queue) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSTATE\tSCHEDULED\tREADY\tACTIVE\tDEAD\tCOMPLETED\tWORKERS\tLEADER")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", printable(v.Name), queueState(v), v.Jobs.Scheduled, v.Jobs.Ready,
			v.Jobs.Active, v.Jobs.Dead, v.Jobs.Completed, len(v.Workers), printable(orDash(v.Leader)))
	}
	return tw.Flush()
}

// allQueues reads the names of every known queue, a page at a time.
func allQueues(ctx context.Context, client admin.Operator) ([]string, error) {
	var names []string
	p := admin.QueueListParams{Limit: admin.QueuesPerPageMax}
	for {
		page, err := client.Queues(ctx, p)
		if err != nil {
			return nil, err
		}
		names = append(names, page.Names...)
		if page.Next == "" {
			return names, nil
		}
		p.Cursor = page.Next
	}
}

// readQueue reads a queue as the API shows it: state, sizes and fleet.
func readQueue(ctx context.Context, client admin.Operator, queue string) (wire.Queue, error) {
	s, err := client.Stats(ctx, queue)
	if err != nil {
		return wire.Queue{}, err
	}
	f, err := client.Fleet(ctx, queue)
	if err != nil {
		return wire.Queue{}, err
	}
	return wire.QueueOf(queue, s, f), nil
}

func queueState(v wire.Queue) string {
	if v.Paused {
		return "paused"
	}
	return "running"
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

// printWorkers prints the processes serving a queue, when there are any;
// a KINDS column when one serves several kinds (worker.Kinds).
func printWorkers(w io.Writer, v wire.Queue) error {
	if len(v.Workers) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	kinds := slices.ContainsFunc(v.Workers, func(p wire.Process) bool { return p.Kinds != nil })
	header := "WORKER\tCONCURRENCY\tRATE LIMIT\tLEADER\tSEEN"
	if kinds {
		header += "\tKINDS"
	}
	fmt.Fprintln(tw, header)
	for _, p := range v.Workers {
		leader := "no"
		if p.Leader {
			leader = "yes"
		}
		if v.Partitions > 1 {
			// Of a partitioned queue: how many partitions it leads.
			leader = fmt.Sprintf("%d of %d partitions", v.Fleet().Leads(p.ID), v.Partitions)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s", printable(p.ID), p.Concurrency, printable(orDash(p.RateLimit)), leader, relative(p.SeenAt))
		if kinds {
			fmt.Fprintf(tw, "\t%s", kindsCell(p.Kinds))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// kindsCell lists the kinds a process serves: "any" for a process with
// one handler for every job, "(no kind)" for the handler of jobs without
// one.
func kindsCell(kinds []string) string {
	if kinds == nil {
		return "any"
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = cmp.Or(printable(k), "(no kind)")
	}
	return strings.Join(names, ",")
}

func printJob(w io.Writer, j *worker.Job) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	limit := "the queue's"
	if j.MaxAttempts > 0 {
		limit = strconv.Itoa(j.MaxAttempts)
	}
	fmt.Fprintf(tw, "id:\t%s\n", printable(j.ID))
	fmt.Fprintf(tw, "queue:\t%s\n", printable(j.Queue))
	if j.Kind != "" {
		fmt.Fprintf(tw, "kind:\t%s\n", printable(j.Kind))
	}
	if j.Key != "" {
		fmt.Fprintf(tw, "key:\t%s\n", printable(j.Key))
	}
	fmt.Fprintf(tw, "state:\t%s\n", printable(string(j.State)))
	fmt.Fprintf(tw, "attempts:\t%d spent (limit: %s)\n", j.Attempt, limit)
	fmt.Fprintf(tw, "priority:\t%s\n", j.Priority)
	if j.UniqueKey != "" {
		fmt.Fprintf(tw, "unique key:\t%s (%s)\n", printable(j.UniqueKey), uniqueWindow(j))
	}
	fmt.Fprintf(tw, "enqueued at:\t%s\n", stamp(j.EnqueuedAt))
	if !j.RunAt.IsZero() {
		fmt.Fprintf(tw, "run at:\t%s (%s)\n", stamp(j.RunAt), relative(j.RunAt))
	}
	if !j.LeaseUntil.IsZero() {
		fmt.Fprintf(tw, "lease until:\t%s\n", stamp(j.LeaseUntil))
	}
	if !j.DiedAt.IsZero() {
		fmt.Fprintf(tw, "died at:\t%s\n", stamp(j.DiedAt))
	}
	if j.LastError != "" {
		fmt.Fprintf(tw, "last error:\t%s\n", printable(j.LastError))
	}
	if p := j.Progress; p != nil {
		fmt.Fprintf(tw, "progress:\t%s %s (updated %s, %s)\n", percent(p.Percent),
			strconv.Quote(p.Message), stamp(p.UpdatedAt), relative(p.UpdatedAt))
	}
	if !j.FinishedAt.IsZero() {
		fmt.Fprintf(tw, "finished at:\t%s\n", stamp(j.FinishedAt))
	}
	for _, name := range slices.Sorted(maps.Keys(j.Headers)) {
		fmt.Fprintf(tw, "header:\t%s=%s\n", printable(name), printable(j.Headers[name]))
	}
	fmt.Fprintf(tw, "payload:\t%s\n", preview(j.Payload))
	if j.State == worker.StateCompleted {
		fmt.Fprintf(tw, "result:\t%s\n", preview(j.Result))
	}
	_ = tw.Flush()
}

// uniqueWindow says how long a job holds its unique key.
func uniqueWindow(j *worker.Job) string {
	switch {
	case j.UniqueFor == 0:
		return "held until the job finishes"
	case j.UniqueAfterFinish:
		return "held until " + j.UniqueFor.String() + " after the job finishes"
	}
	return "held until the job finishes, and for " + j.UniqueFor.String() + " after its enqueue"
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func relative(t time.Time) string {
	d := time.Until(t).Round(time.Millisecond)
	if d > 0 {
		return "in " + d.String()
	}
	return (-d).String() + " ago"
}

// preview shows up to 200 bytes of a payload, quoted so control characters
// cannot reach the terminal.
func preview(p []byte) string {
	return fmt.Sprintf("%d bytes: %s", len(p), quoted(p, 200))
}

// quoted shows up to limit bytes of p, quoted as Go does (so control
// characters cannot reach the terminal), with "..." when cut.
func quoted(p []byte, limit int) string {
	if len(p) > limit {
		return fmt.Sprintf("%q...", p[:limit])
	}
	return fmt.Sprintf("%q", p)
}

// percent shows a progress percent as reported: 42.5%, 100%.
func percent(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker"
)

// runInspect is courier inspect: queue sizes by state, or one job.
func runInspect(ctx context.Context, args []string, std streams) error {
	fs := newFlagSet("inspect", "[--queue Q] [--job ID] [--json] [--api URL]", std.err)
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "show this queue only (default: every known queue)")
	job := fs.String("job", "", "show this job of --queue")
	asJSON := fs.Bool("json", false, "print JSON for machines")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *job != "" && *queue == "" {
		return usageError(fs, "--job needs --queue")
	}
	remote, err := af.remote(fs)
	if err != nil {
		return err
	}
	client, closeClient, err := af.open(ctx, remote, cf)
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
			return writeJSON(std.out, jobView(j))
		}
		printJob(std.out, j)
		return nil
	}
	queues := []string{*queue}
	if *queue == "" {
		if queues, err = client.Queues(ctx); err != nil {
			return err
		}
		slices.Sort(queues)
	}
	rows := make([]queueRow, 0, len(queues))
	for _, q := range queues {
		s, err := client.Stats(ctx, q)
		if err != nil {
			return err
		}
		rows = append(rows, rowOf(q, s))
	}
	if *asJSON {
		return writeJSON(std.out, rows)
	}
	tw := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSCHEDULED\tREADY\tACTIVE\tDEAD")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", printable(r.Queue), r.Scheduled, r.Ready, r.Active, r.Dead)
	}
	return tw.Flush()
}

// queueRow is one queue's sizes, as inspect prints them.
type queueRow struct {
	Queue     string `json:"queue"`
	Scheduled int64  `json:"scheduled"`
	Ready     int64  `json:"ready"`
	Active    int64  `json:"active"`
	Dead      int64  `json:"dead"`
}

func rowOf(queue string, s worker.QueueStats) queueRow {
	return queueRow{Queue: queue, Scheduled: s.Scheduled, Ready: s.Ready, Active: s.Active, Dead: s.Dead}
}

// jobJSON is a job as inspect --json and dead list --json print it.
type jobJSON struct {
	ID          string `json:"id"`
	Queue       string `json:"queue"`
	State       string `json:"state"`
	Attempts    int    `json:"attempts"`
	MaxAttempts int    `json:"max_attempts,omitempty"`
	Timeout     string `json:"timeout,omitempty"`
	// Priority is low, normal or high; the unique fields are left out
	// when not set.
	Priority          string     `json:"priority"`
	UniqueKey         string     `json:"unique_key,omitempty"`
	UniqueFor         string     `json:"unique_for,omitempty"`
	UniqueAfterFinish bool       `json:"unique_after_finish,omitempty"`
	EnqueuedAt        time.Time  `json:"enqueued_at"`
	RunAt             *time.Time `json:"run_at,omitempty"`
	LeaseUntil        *time.Time `json:"lease_until,omitempty"`
	DiedAt            *time.Time `json:"died_at,omitempty"`
	LastError         string     `json:"last_error,omitempty"`
	Payload           string     `json:"payload"`
	// PayloadBase64 is set instead of Payload when the payload is not UTF-8.
	PayloadBase64 []byte `json:"payload_base64,omitempty"`
}

func jobView(j *worker.Job) jobJSON {
	v := jobJSON{
		ID: j.ID, Queue: j.Queue, State: string(j.State), Attempts: j.Attempt,
		MaxAttempts: j.MaxAttempts, EnqueuedAt: j.EnqueuedAt, LastError: j.LastError,
		RunAt: timeOrNil(j.RunAt), LeaseUntil: timeOrNil(j.LeaseUntil), DiedAt: timeOrNil(j.DiedAt),
		Priority: j.Priority.String(), UniqueKey: j.UniqueKey, UniqueAfterFinish: j.UniqueAfterFinish,
	}
	if j.Timeout > 0 {
		v.Timeout = j.Timeout.String()
	}
	if j.UniqueFor > 0 {
		v.UniqueFor = j.UniqueFor.String()
	}
	if utf8.Valid(j.Payload) {
		v.Payload = string(j.Payload)
	} else {
		v.PayloadBase64 = j.Payload
	}
	return v
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func printJob(w io.Writer, j *worker.Job) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	limit := "the queue's"
	if j.MaxAttempts > 0 {
		limit = strconv.Itoa(j.MaxAttempts)
	}
	fmt.Fprintf(tw, "id:\t%s\n", printable(j.ID))
	fmt.Fprintf(tw, "queue:\t%s\n", printable(j.Queue))
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
	fmt.Fprintf(tw, "payload:\t%s\n", preview(j.Payload))
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
	const limit = 200
	if len(p) <= limit {
		return fmt.Sprintf("%d bytes: %q", len(p), p)
	}
	return fmt.Sprintf("%d bytes: %q...", len(p), p[:limit])
}

// writeJSON prints v as indented JSON, exact (strings decode to the bytes
// they hold, but for invalid UTF-8, which encoding/json turns into U+FFFD:
// payloads that are not UTF-8 go in payload_base64 for that reason) and
// free of raw control characters (see jsonPrintable).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsonPrintable(buf.Bytes()))
	return err
}

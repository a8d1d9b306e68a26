package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// defineDead is courier dead list|requeue|purge; each action has its own
// flags.
func defineDead(fs *flag.FlagSet, action string) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	var job *string
	var all *bool
	var limit *int
	var cursor *string
	switch action {
	case "list":
		limit = fs.Int("limit", worker.DeadLimitDefault, fmt.Sprintf("jobs per page, 1 to %d", worker.DeadLimitMax))
		cursor = fs.String("cursor", "", "continue after a previous page (printed at its end)")
	case "requeue", "purge":
		job = fs.String("job", "", "the dead job to "+action)
		all = fs.Bool("all", false, action+" every dead job of the queue")
	}
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *queue == "" {
			return usagef("--queue is required")
		}
		if limit != nil && (*limit < 1 || *limit > worker.DeadLimitMax) {
			return &usageError{field: "--limit", msg: fmt.Sprintf("--limit must be 1 to %d (got %d)", worker.DeadLimitMax, *limit)}
		}
		if job != nil && (*job == "") == !*all {
			return usagef("give --job ID or --all")
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

		var n int
		switch {
		case action == "list":
			return listDead(ctx, client, *queue, worker.DeadQuery{Cursor: *cursor, Limit: *limit}, *asJSON, std)
		case action == "requeue" && *all:
			n, err = client.RequeueAll(ctx, *queue)
		case action == "requeue":
			n, err = client.Requeue(ctx, *queue, *job)
		case action == "purge" && *all:
			n, err = client.PurgeAll(ctx, *queue)
		default:
			n, err = client.Purge(ctx, *queue, *job)
		}
		if err != nil {
			return err
		}
		if *job != "" && n == 0 {
			return &explainedError{cause: worker.ErrNotFound, msg: fmt.Sprintf("queue %q has no dead job %q; nothing was changed", *queue, *job)}
		}
		if *asJSON {
			t := wire.Triage{Action: action, Matched: n, Changed: n, Sample: []string{}}
			if *job != "" {
				t.Sample = []string{*job}
			}
			return writeJSON(std.out, t)
		}
		verb := map[string]string{"requeue": "requeued", "purge": "purged"}[action]
		fmt.Fprintf(std.out, "%s %d dead job(s) of queue %s\n", verb, n, printable(*queue))
		return nil
	}
}

func listDead(ctx context.Context, client jobClient, queue string, q worker.DeadQuery, asJSON bool, std streams) error {
	page, err := client.Dead(ctx, queue, q)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(std.out, wire.PageOf(page.Jobs, page.Next))
	}
	tw := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDIED AT\tATTEMPTS\tLAST ERROR")
	for _, j := range page.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", printable(j.ID), stamp(j.DiedAt), j.Attempt, printable(oneLine(j.LastError, 100)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.Next != "" {
		fmt.Fprintf(std.out, "more: --cursor %s\n", printable(page.Next))
	}
	return nil
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

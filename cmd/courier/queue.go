package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/seed-53d105c9/courier/worker"
)

// runQueue is courier queue pause|resume|status.
func runQueue(ctx context.Context, args []string, std streams) error {
	const synopsis = "pause|resume|status --queue Q [--json]"
	action, err := parseAction("queue", synopsis, []string{"pause", "resume", "status"}, args, std.err)
	if err != nil {
		return err
	}
	fs := newFlagSet("queue "+action, "--queue Q [--json] [--api URL]", std.err)
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	asJSON := fs.Bool("json", false, "print JSON for machines")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *queue == "" {
		return usageError(fs, "--queue is required")
	}
	// A name the library refuses is a mistyped flag: a usage error, before
	// any connection.
	if err := worker.ValidateQueueName(*queue); err != nil {
		return usageError(fs, "%s", printable(flagError(err, jobFlags).Error()))
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

	switch action {
	case "status":
		s, err := client.Stats(ctx, *queue)
		if err != nil {
			return err
		}
		return printQueueStatus(std, queueStatus{queueRow: rowOf(*queue, s), Paused: s.Paused}, *asJSON)
	case "pause":
		err = client.Pause(ctx, *queue)
	default:
		err = client.Resume(ctx, *queue)
	}
	if err != nil {
		return err
	}
	// Neither client tells whether the call changed the state (both are
	// idempotent), so the message names the state it left.
	if *asJSON {
		return writeJSON(std.out, pauseJSON{Queue: *queue, Paused: action == "pause"})
	}
	verb := map[string]string{"pause": "paused", "resume": "resumed"}[action]
	fmt.Fprintf(std.out, "%s queue %s\n", verb, printable(*queue))
	return nil
}

// queueStatus is a queue as courier queue status prints it: inspect's
// row and whether the queue is paused.
type queueStatus struct {
	queueRow
	Paused bool `json:"paused"`
}

// pauseJSON is what pause and resume print with --json: the queue's state
// after the call.
type pauseJSON struct {
	Queue  string `json:"queue"`
	Paused bool   `json:"paused"`
}

func printQueueStatus(std streams, s queueStatus, asJSON bool) error {
	if asJSON {
		return writeJSON(std.out, s)
	}
	state := "running"
	if s.Paused {
		state = "paused"
	}
	tw := tabwriter.NewWriter(std.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSTATE\tSCHEDULED\tREADY\tACTIVE\tDEAD")
	fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", printable(s.Queue), state, s.Scheduled, s.Ready, s.Active, s.Dead)
	return tw.Flush()
}

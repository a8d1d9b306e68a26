package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/seed-53d105c9/courier/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// defineQueue is courier queue pause|resume|status.
func defineQueue(fs *flag.FlagSet, action string) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *queue == "" {
			return usagef("--queue is required")
		}
		// A name the library refuses is a mistyped flag: a usage error
		// (see classify), before any connection.
		if err := worker.ValidateQueueName(*queue); err != nil {
			return err
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
		case "pause":
			err = client.Pause(ctx, *queue)
		case "resume":
			err = client.Resume(ctx, *queue)
		}
		if err != nil {
			return err
		}
		// Neither client tells whether the call changed the state (both are
		// idempotent), so pause and resume name the state they left; with
		// --json, the queue after the call.
		if action != "status" && !*asJSON {
			verb := map[string]string{"pause": "paused", "resume": "resumed"}[action]
			fmt.Fprintf(std.out, "%s queue %s\n", verb, printable(*queue))
			return nil
		}
		v, err := readQueue(ctx, client, *queue)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(std.out, v)
		}
		return printQueue(std, v)
	}
}

// printQueue prints one queue as inspect --queue does: a row, then its
// workers.
func printQueue(std streams, v wire.Queue) error {
	if err := printQueues(std.out, []wire.Queue{v}); err != nil {
		return err
	}
	return printWorkers(std.out, v)
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// defineQueue is courier queue pause|resume|status|wait|forget.
func defineQueue(fs *flag.FlagSet, action string) runFunc {
	cf := addConfigFlags(fs)
	var af *apiFlags
	var timeout *time.Duration
	if action == "wait" {
		// It reads Redis directly: the HTTP API has no long wait.
		timeout = fs.Duration("timeout", 0, "give up after this long (exit 1, saying what is left); 0 = wait as long as it takes")
	} else {
		af = addAPIFlags(fs)
	}
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
		if action == "wait" {
			return waitEmpty(ctx, cf, *queue, *timeout, *asJSON, std)
		}
		client, closeClient, err := af.dial(ctx, fs, cf)
		if err != nil {
			return err
		}
		defer closeClient()

		switch action {
		case "pause":
			err = client.Pause(ctx, *queue)
		case "resume":
			err = client.Resume(ctx, *queue)
		case "forget":
			if err := client.Forget(ctx, *queue); err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(std.out, struct {
					Queue     string `json:"queue"`
					Forgotten bool   `json:"forgotten"`
				}{*queue, true})
			}
			fmt.Fprintf(std.out, "forgot queue %s\n", printable(*queue))
			return nil
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

// waitEmpty is courier queue wait.
func waitEmpty(ctx context.Context, cf *configFlags, queue string, timeout time.Duration, asJSON bool, std streams) error {
	if timeout < 0 {
		return &usageError{field: "--timeout", msg: fmt.Sprintf("--timeout must not be negative (got %s)", timeout)}
	}
	client, closeClient, err := cf.openProducer(ctx)
	if err != nil {
		return err
	}
	defer closeClient()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	if err := client.WaitEmpty(ctx, queue); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// Not Redis failing: the queue did not empty in time.
			return errors.New(strings.Replace(err.Error(), context.DeadlineExceeded.Error(), "--timeout "+timeout.String()+" reached", 1))
		}
		return err
	}
	if asJSON {
		return writeJSON(std.out, struct {
			Queue  string `json:"queue"`
			Empty  bool   `json:"empty"`
			Waited string `json:"waited"`
		}{queue, true, time.Since(start).Round(time.Millisecond).String()})
	}
	fmt.Fprintf(std.out, "queue %s is empty (waited %s)\n", printable(queue), time.Since(start).Round(time.Millisecond))
	return nil
}

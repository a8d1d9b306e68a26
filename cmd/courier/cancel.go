package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// defineCancel is courier cancel: cancel one job, running or not.
func defineCancel(fs *flag.FlagSet, _ string) runFunc {
	cf := addConfigFlags(fs)
	af := addAPIFlags(fs)
	queue := fs.String("queue", "", "queue name (required)")
	id := fs.String("job", "", "id of the job to cancel (required)")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		switch {
		case *queue == "":
			return usagef("--queue is required")
		case *id == "":
			return usagef("--job is required")
		}
		// A name the library refuses is a mistyped flag: a usage error
		// (see classify), before any connection.
		if err := worker.ValidateQueueName(*queue); err != nil {
			return err
		}
		if err := worker.ValidateID(*id); err != nil {
			return err
		}
		client, closeClient, err := af.dial(ctx, fs, cf)
		if err != nil {
			return err
		}
		defer closeClient()

		err = client.Cancel(ctx, *queue, *id)
		if errors.Is(err, worker.ErrJobDead) {
			return &explainedError{cause: worker.ErrJobDead, msg: fmt.Sprintf("job %q of queue %q is dead, so there is nothing to cancel; it was left as it is "+
				"(run it again with courier dead requeue, or delete it with courier dead purge)", *id, *queue)}
		}
		if err != nil {
			return err // ErrNotFound among them: exit 3
		}
		if *asJSON {
			return writeJSON(std.out, cancelJSON{Queue: *queue, ID: *id, Cancelled: true})
		}
		fmt.Fprintf(std.out, "cancelled job %s of queue %s%s\n", printable(*id), printable(*queue), cancelledHow(ctx, client, *queue, *id))
		return nil
	}
}

// cancelJSON is what courier cancel --json prints. The API answers a
// cancel with 204 and no body, so there is no shared shape to print.
type cancelJSON struct {
	Queue     string `json:"queue"`
	ID        string `json:"id"`
	Cancelled bool   `json:"cancelled"`
}

// cancelledHow ends the message of a cancel with where the job is, read
// from the job after it, since Cancel does not say: in the cancelled set,
// whether it had started or not (a handler running it was told to stop).
// When the job has changed again since (requeued, purged) or cannot be
// read, the message says no more than that the job was cancelled, which
// is true either way.
func cancelledHow(ctx context.Context, client admin.Operator, queue, id string) string {
	if j, err := client.Get(ctx, queue, id); err == nil && j.State == worker.StateCancelled {
		return "; it is kept as cancelled (a handler running it was told to stop); run it again with courier dead requeue --state cancelled"
	}
	return ""
}

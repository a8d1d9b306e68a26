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

// cancelledHow ends the message of a cancel with what it did, read from
// the job after it, since Cancel does not say: a job that had not started
// is gone; one that was running is dead with the last error "cancelled"
// (Cancel refuses a job that was dead already). Read before the cancel,
// the state could be stale: a ready job may start in between. When the
// job has changed again since (requeued, purged, enqueued anew under its
// id) or cannot be read, the message says no more than that the job was
// cancelled, which is true either way. (A running job whose record was
// deleted by hand is gone too, and reads as one that had not started.)
func cancelledHow(ctx context.Context, client admin.Operator, queue, id string) string {
	j, err := client.Get(ctx, queue, id)
	switch {
	case errors.Is(err, worker.ErrNotFound):
		return " (it had not started)"
	case err == nil && j.State == worker.StateDead && j.LastError == "cancelled":
		return ": it was running; its handler was told to stop and the job is in the dead set (requeue it with courier dead requeue)"
	}
	return ""
}

// Package asynqcompat runs existing hibiken/asynq handler code under
// Courier, for a migration from asynq (docs/migrating-from-asynq.md): a
// Courier job becomes an asynq Task of type job.Kind with the job's
// payload and headers, so an *asynq.ServeMux routes Courier jobs by kind
// as it routed asynq tasks by type.
//
// It is its own Go module, so that Courier's library does not depend on
// asynq. What cannot work:
//
//   - asynq's context helpers (asynq.GetRetryCount, GetMaxRetry,
//     GetTaskID, GetQueueName) read keys that only asynq's server puts in
//     the context: under Courier they report nothing (ok false). Use
//     JobOf(ctx): job.Attempt-1 is the retry count, job.MaxAttempts-1 the
//     max retry, job.ID the task id, job.Queue the queue.
//   - Task.ResultWriter is nil on a task not made by asynq's server.
//     Writing through it panics; Handler turns that panic into a
//     permanent failure naming the cause (retrying cannot fix it). Use
//     JobOf(ctx).SetResult with a queue that retains completed jobs.
//   - Task.Options are empty: a task's options (queue, retries, timeout)
//     are the Courier job's, set where it was enqueued.
package asynqcompat

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/seed-53d105c9/courier/worker"
)

// jobKey is the context key of the running job.
type jobKey struct{}

// Handler returns a Courier handler that runs h, an asynq handler (an
// *asynq.ServeMux included), on each job as the asynq task of type
// job.Kind with the job's payload and headers. The outcome maps as asynq
// reads it: nil succeeds; an error wrapping asynq.SkipRetry fails for good
// (worker.Permanent: the job goes to the dead set, as asynq archives it);
// an error wrapping asynq.RevokeTask ends the job without a retry and
// without a dead entry (it succeeds); any other error fails the attempt,
// retried under the queue's policy. A panic is the pool's, as any
// handler's, but for one from Task.ResultWriter (see the package doc).
func Handler(h asynq.Handler) worker.Handler {
	return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) (err error) {
		task := asynq.NewTaskWithHeaders(job.Kind, job.Payload, job.Headers)
		defer func() {
			if p := recover(); p != nil {
				if strings.Contains(string(debug.Stack()), "asynq.(*ResultWriter)") {
					err = worker.Permanent(fmt.Errorf("asynq handler for %q wrote through Task.ResultWriter, which is nil under Courier (use asynqcompat.JobOf(ctx).SetResult): %v", job.Kind, p))
					return
				}
				panic(p)
			}
		}()
		err = h.ProcessTask(context.WithValue(ctx, jobKey{}, job), task)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, asynq.RevokeTask):
			return nil
		case errors.Is(err, asynq.SkipRetry):
			return worker.Permanent(err)
		}
		return err
	})
}

// JobOf returns the Courier job a Handler is running, from the context
// it hands the asynq handler: what asynq's context helpers told (retry
// count, task id, queue), and SetResult in place of Task.ResultWriter.
func JobOf(ctx context.Context) (*worker.Job, bool) {
	j, ok := ctx.Value(jobKey{}).(*worker.Job)
	return j, ok
}

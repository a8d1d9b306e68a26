package admin

import (
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// jobOf returns the Job of a listed record of queue, field for field as
// worker.Client.Get maps one (TestJobsAsGet holds the two together).
func jobOf(queue string, r *store.Record) *worker.Job {
	kind, headers := core.SplitKind(r.Headers)
	job := &worker.Job{
		ID:                r.ID,
		Queue:             queue,
		Kind:              kind,
		Payload:           r.Payload,
		Attempt:           r.Attempt,
		MaxAttempts:       r.MaxAttempts,
		Timeout:           r.Timeout,
		EnqueuedAt:        r.EnqueuedAt,
		RunAt:             r.RunAt,
		LastError:         r.LastError,
		Priority:          worker.Priority(r.Priority),
		Key:               r.Key,
		UniqueKey:         r.Unique.Key,
		UniqueFor:         r.Unique.For,
		UniqueAfterFinish: r.Unique.AfterFinish,
		StartedAt:         core.StartedAt(r.Claim),
		Worker:            r.Worker,
		Headers:           headers,
		Result:            r.Result,
	}
	if p := r.Progress; p != nil {
		job.Progress = &worker.Progress{Percent: p.Percent, Message: p.Message, UpdatedAt: p.UpdatedAt}
	}
	return job
}

package ui

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// jobView is the data of a job's page.
type jobView struct {
	Queue    string
	Job      *worker.Job
	URL      string // this page
	Payload  payloadView
	Result   payloadView // a completed job's
	Attempts string
	Timeline []event
	// Cancel: the job may be cancelled (scheduled, ready or active);
	// Triage: it is dead and the principal may requeue or purge it;
	// KeyLink: the principal may read its key's page.
	Cancel, Triage, KeyLink bool
	QueueURL, DeadURL       string
}

// event is one line of a job's timeline, as far as Redis knows it.
type event struct {
	At     time.Time // zero when the moment is not known
	What   string
	Detail string
}

// job serves GET /ui/queues/{queue}/jobs/{id...}.
func (h *Handler) job(w http.ResponseWriter, r *http.Request, s *session) error {
	queue, b, err := h.queueBackend(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	j, err := b.Get(r.Context(), queue, id)
	if err != nil {
		return fmt.Errorf("read job: %w", err)
	}
	v := jobView{
		Queue: queue, Job: j, URL: jobURL(queue, id), Payload: showPayload(j.Payload).titled("Payload", ""),
		Result:   showPayload(j.Result).titled("Result", "The handler set no result."),
		Attempts: attempts(j), Timeline: timeline(j, h.now()),
		Cancel: j.State != worker.StateDead && j.State != worker.StateCompleted && j.State != worker.StateCancelled &&
			h.may(s, routeCancel, queue),
		Triage:   (j.State == worker.StateDead || j.State == worker.StateCancelled) && h.may(s, routeRequeue, queue),
		KeyLink:  j.Key != "" && h.may(s, routeKey, queue),
		QueueURL: queueURL(queue), DeadURL: tabURL(queue, string(j.State), "", ""),
	}
	h.render(w, r, s, http.StatusOK, "job", "Job "+id, "", v)
	return nil
}

// attempts is "2 of 5", or "2 (the queue's limit)" when the job has no
// limit of its own.
func attempts(j *worker.Job) string {
	if j.MaxAttempts > 0 {
		return fmt.Sprintf("%d of %d", j.Attempt, j.MaxAttempts)
	}
	return fmt.Sprintf("%d (of the queue's max attempts)", j.Attempt)
}

// timeline is what Redis knows of j's life, in order: it keeps the
// enqueue, the due time, the attempts spent, the running attempt (its
// start, worker and lease), the death or the completion, not a log of
// every attempt.
func timeline(j *worker.Job, now time.Time) []event {
	var ev []event
	enq := "enqueued, priority " + j.Priority.String()
	if j.UniqueKey != "" {
		enq += ", unique key " + j.UniqueKey
		if j.UniqueFor > 0 {
			enq += " held for " + j.UniqueFor.String()
			if j.UniqueAfterFinish {
				enq += " after it finishes"
			}
		}
	}
	ev = append(ev, event{At: j.EnqueuedAt, What: enq})
	spent := j.Attempt
	if j.State == worker.StateActive || j.State == worker.StateCompleted {
		spent-- // the running or the successful attempt is counted, and did not fail
	}
	// A dead or cancelled job's last event says how many attempts it had
	// and quotes its last error: the attempts before it are not told
	// apart (a cancel's own error is the last).
	if spent > 0 && j.State != worker.StateDead && j.State != worker.StateCancelled {
		e := event{What: fmt.Sprintf("%d attempt(s) failed and were retried", spent)}
		if j.LastError != "" {
			e.What += "; the last with"
			e.Detail = j.LastError
		}
		ev = append(ev, e)
	}
	switch j.State {
	case worker.StateScheduled:
		ev = append(ev, event{At: j.RunAt, What: "due " + since(now, j.RunAt)})
	case worker.StateReady:
		ev = append(ev, event{At: j.RunAt, What: "due since " + strings.TrimSuffix(since(now, j.RunAt), " ago") + "; waiting for a worker"})
	case worker.StateActive:
		who := j.Worker
		if who == "" {
			who = "a worker of a version that does not record it"
		}
		ev = append(ev, event{At: j.StartedAt, What: fmt.Sprintf("attempt %d started by %s", j.Attempt, who)})
		ev = append(ev, event{At: j.LeaseUntil, What: "lease until (renewed while it runs)"})
	case worker.StateDead:
		ev = append(ev, event{At: j.DiedAt, What: fmt.Sprintf("died after %d attempt(s)", j.Attempt), Detail: j.LastError})
	case worker.StateCompleted:
		ev = append(ev, event{At: j.FinishedAt, What: fmt.Sprintf("completed at attempt %d", j.Attempt)})
	case worker.StateCancelled:
		ev = append(ev, event{At: j.FinishedAt, What: fmt.Sprintf("cancelled after %d attempt(s)", j.Attempt), Detail: j.LastError})
	}
	return ev
}

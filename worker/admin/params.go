package admin

import "github.com/seed-53d105c9/courier/worker"

// QueueListParams selects a page of the known queues (Operator.Queues), for
// tools that list queues: the CLI, the HTTP API, the web UI.
type QueueListParams struct {
	// Only, when not nil, limits the listing to these queues (sorted, as a
	// caller limited to some queues holds them): the page holds those of
	// them that exist, by name. Nil lists every known queue, in the order
	// of the set of queues.
	Only []string
	// Cursor is a previous QueuePage.Next of the same listing; "" starts
	// at the first page.
	Cursor string
	// Limit is the most queues on the page, 1 to QueuesPerPageMax. Default
	// QueuesPerPageDefault.
	Limit int
}

// JobListParams selects a page of a queue's jobs in one state
// (Operator.Jobs), for tools that show jobs: the CLI, the HTTP API, the
// web UI.
type JobListParams struct {
	// Queue is the queue listed. Required.
	Queue string
	// State is the state listed: worker.StateScheduled, StateReady,
	// StateActive, StateDead or StateCompleted. Required.
	State worker.State
	// Cursor is a previous JobPage.Next of the same queue and state; "" starts
	// at the beginning. A cursor of another state is refused.
	Cursor string
	// Limit is the most jobs on the page, 1 to ListLimitMax. Default
	// ListLimitDefault.
	Limit int
	// Dead filters the dead jobs; only with worker.StateDead. The zero
	// filter lists every dead job.
	Dead DeadFilter
}

// TriageAction is what a triage does to the dead jobs it selects.
type TriageAction string

// The triage actions, for TriageParams.Action.
const (
	// TriageRequeue moves the selected dead jobs back to due now, with
	// their attempts reset and their last errors kept.
	TriageRequeue TriageAction = "requeue"
	// TriagePurge deletes the selected dead jobs for good; a job that is
	// due or active is never deleted.
	TriagePurge TriageAction = "purge"
)

// TriageParams selects dead jobs of a queue and says what to do with them
// (Operator.Triage), for operators and their tools.
type TriageParams struct {
	// Queue is the queue whose dead set is triaged. Required.
	Queue string
	// Action is TriageRequeue or TriagePurge. Required.
	Action TriageAction
	// IDs selects these jobs (1 to 1000 ids, each valid; a repeated id
	// counts once); ids not in the dead set are skipped and not counted.
	// Leave Filter zero with IDs.
	IDs []string
	// Filter, when IDs is empty, selects every dead job it matches (the
	// zero Filter: every dead job), among those dead when the walk started.
	Filter DeadFilter
	// DryRun counts and samples what would change, and changes nothing.
	DryRun bool
	// Cursor resumes a walk from a previous TriageResult.Next, given with
	// the same selection; "" starts it.
	Cursor string
	// Max stops the call after this many matched jobs and returns Next; 0 =
	// no limit.
	Max int
}

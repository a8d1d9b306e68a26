// Package asynqimport is courier import asynq: it moves the pending,
// scheduled, retry and archived tasks of hibiken/asynq queues, read
// straight from asynq's Redis, into Courier queues, exactly once.
//
// The protocol, per batch of one state of one queue: read the ids and the
// task hashes; write the jobs to Courier with admin.Client.Import, which
// records each task's id in an import ledger in the same atomic script;
// then delete the tasks from asynq (removeScript), each only while it is
// still in the state it was read in. A crash between the two leaves tasks
// in both systems and their ids in the ledger: a rerun finds them there
// (ImportAlready), writes nothing and finishes the deletes. So the import
// can be stopped at any point and run again, and a second complete run
// moves nothing. Active tasks are never moved: asynq servers must be
// stopped first.
package asynqimport

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// System is the name of the import ledger (admin.Client.Import).
const System = "asynq"

// DefaultBatch is the tasks read, imported and deleted per round.
const DefaultBatch = 500

// Options says what to import.
type Options struct {
	// Queues are the asynq queues to move; empty: every queue of asynq's
	// asynq:queues set.
	Queues []string
	// Map gives the Courier queue of an asynq queue; a queue it does not
	// name goes to the Courier queue of the same name, which must be a
	// valid Courier queue name.
	Map map[string]string
	// Apply moves the tasks; false is a dry run that reads (asynq, and
	// Courier's import ledger) and changes nothing.
	Apply bool
	// Batch is the tasks per round, 1 to 1000 (0: DefaultBatch).
	Batch int
	// Validate checks a job as the producer would (worker.Client.Validate);
	// a dry run uses it to tell what would be skipped.
	Validate func(worker.JobSpec) error
	// Progress, when set, is told after each round.
	Progress func(r Row)

	// afterCommit, for tests, runs after Courier committed a round and
	// before asynq's deletes; an error stops the run there.
	afterCommit func() error
}

// Row is the tally of one state of one queue.
type Row struct {
	Queue  string // asynq's
	Target string // Courier's
	State  string // pending, scheduled, retry, archived; or active (never moved)
	Found  int    // tasks read
	Moved  int    // written to Courier and deleted from asynq
	// Already are tasks the ledger shows imported before (a run that
	// stopped between Courier's write and asynq's delete): deleted from
	// asynq now, nothing written (on a dry run: would be).
	Already int
	// Skipped are the tasks left in asynq, by reason.
	Skipped map[string]int
	// Kept are tasks written to Courier that asynq's delete did not find
	// in the state they were read in: something (a running asynq server)
	// moved them meanwhile, so they may exist in both systems.
	Kept int
}

// SkippedTotal is the number of skipped tasks.
func (r *Row) SkippedTotal() int {
	n := 0
	for _, c := range r.Skipped {
		n += c
	}
	return n
}

// Summary is a run's tally.
type Summary struct {
	Apply bool
	Rows  []Row
}

// Run moves (or, without Apply, counts) the tasks of asynq's Redis src
// into Courier through dst.
func Run(ctx context.Context, src rueidis.Client, dst *admin.Client, o Options) (*Summary, error) {
	if o.Batch == 0 {
		o.Batch = DefaultBatch
	}
	if o.Batch < 1 || o.Batch > 1000 {
		return nil, fmt.Errorf("batch must be 1 to 1000 (got %d)", o.Batch)
	}
	qs := o.Queues
	if len(qs) == 0 {
		var err error
		if qs, err = queues(ctx, src); err != nil {
			return nil, err
		}
		slices.Sort(qs)
	}
	targets := map[string]string{}
	for _, q := range qs {
		t := q
		if m, ok := o.Map[q]; ok {
			t = m
		}
		if err := worker.ValidateQueueName(t); err != nil {
			return nil, fmt.Errorf("asynq queue %q has no valid Courier queue name (map it to one): %w", q, err)
		}
		targets[q] = t
	}
	sum := &Summary{Apply: o.Apply}
	for _, q := range qs {
		for _, state := range states {
			row := Row{Queue: q, Target: targets[q], State: state, Skipped: map[string]int{}}
			err := o.moveState(ctx, src, dst, &row)
			sum.Rows = append(sum.Rows, row)
			if err != nil {
				return sum, fmt.Errorf("asynq queue %q, %s tasks: %w", q, state, err)
			}
		}
		n, err := counts(ctx, src, q)
		if err != nil {
			return sum, err
		}
		if n["active"] > 0 {
			sum.Rows = append(sum.Rows, Row{Queue: q, Target: targets[q], State: "active", Found: int(n["active"]),
				Skipped: map[string]int{"active: an asynq server runs it (stop the servers, then run again)": int(n["active"])}})
		}
	}
	return sum, nil
}

// moveState moves one state of one queue, a batch at a time, and tallies
// it in row.
func (o *Options) moveState(ctx context.Context, src rueidis.Client, dst *admin.Client, row *Row) error {
	var off int64
	for {
		ents, err := page(ctx, src, row.Queue, row.State, off, int64(o.Batch))
		if err != nil || len(ents) == 0 {
			return err
		}
		left, err := o.moveBatch(ctx, src, dst, row, ents)
		if err != nil {
			return err
		}
		off += int64(left)
		if o.Progress != nil {
			o.Progress(*row)
		}
	}
}

// moveBatch moves one page of a state and returns how many of its tasks
// stay in that state (skipped, or all of them on a dry run).
func (o *Options) moveBatch(ctx context.Context, src rueidis.Client, dst *admin.Client, row *Row, ents []entry) (int, error) {
	tasks, err := readTasks(ctx, src, row.Queue, ents)
	if err != nil {
		return 0, err
	}
	row.Found += len(ents)
	now := time.Now()
	var jobs []admin.ImportJob
	var ids []string
	left := 0
	skip := func(reason string) { row.Skipped[reason]++; left++ }
	for i, e := range ents {
		s := tasks[i]
		if !s.found {
			skip("gone: its task hash was deleted while the import read it")
			continue
		}
		if s.state != row.State {
			skip("changed state while the import read it (run again)")
			continue
		}
		t, err := decodeTask([]byte(s.msg))
		if err != nil {
			skip("undecodable task message")
			continue
		}
		j := toJob(t, row, e, s, now)
		if o.Validate != nil {
			if err := o.Validate(j.Spec); err != nil {
				skip(reasonOf(err))
				continue
			}
		}
		jobs, ids = append(jobs, j), append(ids, e.id)
	}
	if !o.Apply {
		// What the ledger holds was imported before (a run stopped
		// between Courier's write and asynq's delete): the apply would
		// write nothing for it and finish its delete.
		held, err := dst.Imported(ctx, System, jobs)
		if err != nil {
			return 0, err
		}
		for _, h := range held {
			if h {
				row.Already++
			}
		}
		return len(ents), nil
	}
	if len(jobs) == 0 {
		return left, nil
	}
	res, err := dst.Import(ctx, System, jobs)
	if err != nil {
		return 0, err
	}
	var done []string
	moved, already := 0, 0
	for k, r := range res {
		switch r.Outcome {
		case admin.ImportAdded:
			done = append(done, ids[k])
			moved++
		case admin.ImportAlready:
			done = append(done, ids[k])
			already++
		case admin.ImportIDExists:
			skip("a Courier job of the same id exists")
		case admin.ImportUniqueHeld:
			skip("its unique key is held by a Courier job")
		case admin.ImportInvalid:
			skip(reasonOf(r.Err))
		}
	}
	if o.afterCommit != nil {
		if err := o.afterCommit(); err != nil {
			return 0, err
		}
	}
	n, err := remove(ctx, src, row.Queue, row.State, done)
	if err != nil {
		return 0, err
	}
	row.Moved += moved
	row.Already += already
	// Deleted fewer than imported: the rest left the state meanwhile (a
	// running server took them); they no longer count against the offset.
	row.Kept += len(done) - n
	return left, nil
}

// reasonOf words a rejected job's error as a skip reason: the field a
// validation error names, so that reasons group.
func reasonOf(err error) string {
	var ve *worker.ValidationError
	if errors.As(err, &ve) {
		return "invalid in Courier: " + ve.Field
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, ':'); i > 0 {
		msg = msg[:i]
	}
	return "invalid in Courier: " + msg
}

// toJob maps an asynq task to a Courier job (docs/migrating-from-asynq.md
// has the table).
func toJob(t task, row *Row, e entry, s stored, now time.Time) admin.ImportJob {
	spec := worker.JobSpec{
		Queue:       row.Target,
		ID:          e.id,
		Kind:        t.Type,
		Payload:     t.Payload,
		MaxAttempts: int(t.Retry) + 1,
		Headers:     t.Headers,
	}
	runAt := now
	if row.State == "scheduled" || row.State == "retry" {
		runAt = time.Unix(e.score, 0)
		spec.RunAt = runAt
	}
	switch {
	case t.Timeout > 0:
		spec.Timeout = time.Duration(t.Timeout) * time.Second
	case t.Deadline > 0:
		// A deadline is a time; Courier's timeout is per attempt: the
		// time from run-at to the deadline, at least a second.
		spec.Timeout = max(time.Unix(t.Deadline, 0).Sub(runAt).Truncate(time.Second), time.Second)
		spec.Timeout = min(spec.Timeout, worker.TimeoutLimit)
	}
	if s.uniqueMs > 0 {
		spec.UniqueKey = strings.TrimPrefix(s.uniqueKey, uniquePrefix(row.Queue))
		spec.UniqueFor = time.Duration(s.uniqueMs) * time.Millisecond
	}
	j := admin.ImportJob{Spec: spec, Source: row.Queue + "/" + e.id, Attempts: int(max(t.Retried, 0)), LastError: t.ErrorMsg}
	if row.State == "archived" {
		j.DiedAt = time.Unix(e.score, 0)
	}
	return j
}

// Write prints the summary as a table, then what the user should know.
func (s *Summary) Write(w interface{ Write([]byte) (int, error) }) {
	verb := "MOVED"
	if !s.Apply {
		verb = "WOULD-MOVE"
	}
	fmt.Fprintf(w, "%-20s %-20s %-10s %8s %10s %8s %8s  %s\n", "ASYNQ-QUEUE", "COURIER-QUEUE", "STATE", "FOUND", verb, "ALREADY", "SKIPPED", "REASONS")
	active := 0
	for _, r := range s.Rows {
		moved := r.Moved
		if !s.Apply && r.State != "active" {
			moved = r.Found - r.SkippedTotal() - r.Already
		}
		var reasons []string
		for _, k := range slices.Sorted(maps.Keys(r.Skipped)) {
			reasons = append(reasons, fmt.Sprintf("%d %s", r.Skipped[k], k))
		}
		if r.Kept > 0 {
			reasons = append(reasons, fmt.Sprintf("%d imported but left asynq's state meanwhile (may exist in both)", r.Kept))
		}
		if r.State == "active" {
			active += r.Found
		}
		fmt.Fprintf(w, "%-20s %-20s %-10s %8d %10d %8d %8d  %s\n", r.Queue, r.Target, r.State, r.Found, moved, r.Already, r.SkippedTotal(), strings.Join(reasons, "; "))
	}
	if active > 0 {
		fmt.Fprintf(w, "%d active tasks were not moved: stop the asynq servers, let them hand back their tasks, then run again\n", active)
	}
	if !s.Apply {
		fmt.Fprintln(w, "dry run: nothing changed; stop the asynq servers, then run again with --apply")
	}
}

package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// ImportJob is one job that a migration tool (courier import asynq) brings
// from another queue system, with the history it had there.
type ImportJob struct {
	// Spec is the job as EnqueueMany takes it, and checked by the same
	// rules; ID is required, RunAt is when it is due (zero: now) and
	// Delay must be zero.
	Spec worker.JobSpec
	// Source is the job's id in the system it came from, its entry in the
	// import ledger: a Source the ledger holds is never imported again.
	Source    string
	Attempts  int       // attempts already spent there
	LastError string    // the last attempt's error, "" for none
	DiedAt    time.Time // not zero: the job goes straight to the dead set
}

// ImportOutcome is what Import did with one job.
type ImportOutcome int

// The outcomes of Import. Only ImportAdded wrote anything.
const (
	ImportAdded      ImportOutcome = iota + 1 // written, with its ledger entry
	ImportAlready                             // the ledger holds its Source: imported before
	ImportIDExists                            // a job of its id exists in the queue
	ImportUniqueHeld                          // its unique key is held (ImportResult.Holder)
	ImportInvalid                             // it breaks a rule of a job (ImportResult.Err)
)

// ImportResult is the outcome of one job of Import.
type ImportResult struct {
	Outcome ImportOutcome
	Holder  string // the job holding the unique key, for ImportUniqueHeld
	Err     error  // why the job is invalid, for ImportInvalid
}

// maxImportReroutes is how many times Import routes a batch again after
// a partition refused its routing, before it sends it to partition 0.
const maxImportReroutes = 3

// Import writes jobs brought from another queue system, for a migration
// tool: each is written with its attempts, last error and death (a job
// with DiedAt goes to the dead set) and, in the same atomic call, recorded
// in the import ledger of system (e.g. "asynq") in its partition's slot,
// so that running Import again for the same Source writes nothing
// (ImportAlready), whatever happened to the job since. One job's result
// per job, in order; an error means a Redis call failed, and the jobs of
// the calls before it were written (run Import again: the ledger keeps it
// exactly once). Jobs of a partitioned queue are placed by their unique
// key, else their id, as EnqueueMany places them. Run one Import per
// ledger at a time.
func (c *Client) Import(ctx context.Context, system string, jobs []ImportJob) ([]ImportResult, error) {
	if err := worker.ValidateQueueName(system); err != nil {
		return nil, fmt.Errorf("import ledger name %q: %w", system, err)
	}
	// A dead job holds no unique key in Courier: it is dropped (from a
	// copy) before the job is placed by it.
	jobs = slices.Clone(jobs)
	res := make([]ImportResult, len(jobs))
	byQueue := map[string][]int{}
	var order []string
	producer := c.producer.Load()
	for i := range jobs {
		j := &jobs[i]
		if !j.DiedAt.IsZero() {
			j.Spec.UniqueKey, j.Spec.UniqueFor, j.Spec.UniqueAfterFinish = "", 0, false
		}
		err := producer.Validate(j.Spec)
		switch {
		case err != nil:
		case j.Spec.ID == "":
			err = errors.New("invalid ID: an imported job needs its id")
		case j.Spec.Delay != 0:
			err = errors.New("invalid Delay: an imported job is due at its RunAt")
		case j.Spec.Key != "":
			err = errors.New("invalid Key: an imported job has no key (asynq has none); enqueue keyed jobs with worker.Client")
		case j.Source == "":
			err = errors.New("invalid Source: is empty")
		case j.Attempts < 0:
			err = fmt.Errorf("invalid Attempts: must not be negative (got %d)", j.Attempts)
		}
		if err != nil {
			res[i] = ImportResult{Outcome: ImportInvalid, Err: err}
			continue
		}
		if _, ok := byQueue[j.Spec.Queue]; !ok {
			order = append(order, j.Spec.Queue)
		}
		byQueue[j.Spec.Queue] = append(byQueue[j.Spec.Queue], i)
	}
	for _, q := range order {
		if err := c.core.St.AddQueues(ctx, q); err != nil {
			return res, err
		}
		if err := c.importQueue(ctx, system, q, jobs, byQueue[q], res); err != nil {
			return res, fmt.Errorf("import to queue %q: %w", q, err)
		}
	}
	return res, nil
}

// Imported reports, for each job, whether the import ledger of system
// holds its Source in a partition of its queue: what Import would answer
// ImportAlready for. It only reads, for a migration tool's dry run.
func (c *Client) Imported(ctx context.Context, system string, jobs []ImportJob) ([]bool, error) {
	if err := worker.ValidateQueueName(system); err != nil {
		return nil, fmt.Errorf("import ledger name %q: %w", system, err)
	}
	out := make([]bool, len(jobs))
	byQueue := map[string][]int{}
	for i := range jobs {
		if q := jobs[i].Spec.Queue; worker.ValidateQueueName(q) == nil {
			byQueue[q] = append(byQueue[q], i)
		}
	}
	for q, idx := range byQueue {
		l, err := c.core.Layer.Layout(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, p := range l.All(q) {
			var members []string
			var which []int
			for _, i := range idx {
				if !out[i] {
					members, which = append(members, jobs[i].Source), append(which, i)
				}
			}
			if len(members) == 0 {
				break
			}
			held, err := c.core.St.Ledgered(ctx, c.core.St.LedgerKey(p, system), members)
			if err != nil {
				return nil, err
			}
			for k, h := range held {
				out[which[k]] = h
			}
		}
	}
	return out, nil
}

// importQueue imports the jobs of one queue (their indexes idx), routed
// by its layout, and fills their results.
func (c *Client) importQueue(ctx context.Context, system, queue string, jobs []ImportJob, idx []int, res []ImportResult) error {
	l, err := c.core.Layer.Layout(ctx, queue)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		fallback := attempt >= maxImportReroutes
		if err := c.ledgeredElsewhere(ctx, system, queue, l, fallback, jobs, idx, res); err != nil {
			return err
		}
		groups := map[string][]int{}
		var parts []string
		for _, i := range idx {
			if res[i].Outcome != 0 {
				continue
			}
			p := queue
			if !fallback {
				p = l.Home(queue, homeKey(&jobs[i].Spec))
			}
			if _, ok := groups[p]; !ok {
				parts = append(parts, p)
			}
			groups[p] = append(groups[p], i)
		}
		var refused error
		for _, p := range parts {
			to := store.Target{Partition: p, Version: l.Version}
			if fallback {
				to.Version = -1
			}
			batch := make([]store.ImportJob, len(groups[p]))
			for k, i := range groups[p] {
				batch[k] = storeImport(&jobs[i])
			}
			out, err := c.core.St.Import(ctx, to, c.core.St.LedgerKey(p, system), batch)
			for k, o := range out {
				res[groups[p][k]] = importResult(o)
			}
			switch {
			case store.IsRefusal(err) && !fallback:
				refused = err
			case err != nil:
				return err
			}
		}
		if refused == nil {
			return nil
		}
		if l, err = c.core.Layer.Layout(ctx, queue); err != nil {
			return err
		}
	}
}

// ledgeredElsewhere marks ImportAlready the jobs of idx, not yet done,
// whose Source the ledger of another partition than their home holds: a
// job imported under an earlier layout of the queue.
func (c *Client) ledgeredElsewhere(ctx context.Context, system, queue string, l store.Layout, fallback bool, jobs []ImportJob, idx []int, res []ImportResult) error {
	all := l.All(queue)
	if len(all) <= 1 {
		return nil
	}
	for _, p := range all {
		var members []string
		var which []int
		for _, i := range idx {
			home := queue
			if !fallback {
				home = l.Home(queue, homeKey(&jobs[i].Spec))
			}
			if res[i].Outcome == 0 && home != p {
				members, which = append(members, jobs[i].Source), append(which, i)
			}
		}
		if len(members) == 0 {
			continue
		}
		held, err := c.core.St.Ledgered(ctx, c.core.St.LedgerKey(p, system), members)
		if err != nil {
			return err
		}
		for k, h := range held {
			if h {
				res[which[k]] = ImportResult{Outcome: ImportAlready}
			}
		}
	}
	return nil
}

// homeKey is what places a job among a queue's partitions: its unique
// key, else its id (worker's EnqueueMany places jobs the same way).
func homeKey(s *worker.JobSpec) string {
	return cmp.Or(s.UniqueKey, s.ID)
}

// storeImport is an ImportJob as the store takes it.
func storeImport(j *ImportJob) store.ImportJob {
	s := &j.Spec
	return store.ImportJob{
		NewJob: store.NewJob{
			ID:          s.ID,
			At:          s.RunAt,
			MaxAttempts: s.MaxAttempts,
			Timeout:     s.Timeout,
			Payload:     s.Payload,
			Priority:    store.Priority(s.Priority),
			Unique:      store.Unique{Key: s.UniqueKey, For: s.UniqueFor.Truncate(time.Millisecond), AfterFinish: s.UniqueAfterFinish},
			Headers:     core.WithKind(s.Headers, s.Kind),
		},
		Member:    j.Source,
		Attempts:  j.Attempts,
		LastError: j.LastError,
		DiedAt:    j.DiedAt,
	}
}

// importResult maps the store's outcome to Import's.
func importResult(o store.Imported) ImportResult {
	switch o.Outcome {
	case store.ImportAdded:
		return ImportResult{Outcome: ImportAdded}
	case store.ImportAlready:
		return ImportResult{Outcome: ImportAlready}
	case store.ImportSkippedUnique:
		return ImportResult{Outcome: ImportUniqueHeld, Holder: o.Holder}
	}
	return ImportResult{Outcome: ImportIDExists}
}

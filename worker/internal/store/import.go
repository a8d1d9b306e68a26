package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// ImportJob is one job brought from another queue system (lua/import.lua):
// a NewJob with the history it had there. At is its run-at (zero: now);
// Delay is not used.
type ImportJob struct {
	NewJob
	// Member is the job's entry in the import ledger: its id in the system
	// it came from. A member the ledger holds is never imported again.
	Member    string
	Attempts  int       // attempts already spent
	LastError string    // the last attempt's error, "" for none
	DiedAt    time.Time // not zero: the job goes straight to the dead set
}

// ImportOutcome is what Import did with one job.
type ImportOutcome int

// The outcomes of Import.
const (
	ImportSkippedID     ImportOutcome = iota // a job of that id exists: nothing written
	ImportAdded                              // written, with its ledger entry
	ImportAlready                            // the ledger holds its member: nothing written
	ImportSkippedUnique                      // its unique key is held (Imported.Holder)
)

// Imported is the outcome of one job of Import.
type Imported struct {
	Outcome ImportOutcome
	Holder  string // the id holding the unique key, for ImportSkippedUnique
}

// LedgerKey is the import ledger of a partition: the set of members
// (ids in the system they came from) that Import wrote to it, in the
// partition's slot. system names where they came from ("asynq").
func (s *Store) LedgerKey(partition, system string) string {
	return s.prefix + ":{" + partition + "}:imported:" + system
}

// Ledgered reports, for each member, whether the ledger holds it.
func (s *Store) Ledgered(ctx context.Context, ledger string, members []string) ([]bool, error) {
	out := make([]bool, 0, len(members))
	for batch := range slices.Chunk(members, MaxBatch) {
		vals, err := s.c.Do(ctx, s.c.B().Smismember().Key(ledger).Member(batch...).Build()).AsIntSlice()
		if err != nil {
			return out, fmt.Errorf("read the import ledger %s: %w", ledger, err)
		}
		for _, v := range vals {
			out = append(out, v == 1)
		}
	}
	return out, nil
}

// Import writes jobs to a Target, MaxBatch per script call, each with its
// ledger entry in ledger (LedgerKey of the target's partition) in the same
// call. On error the batches before the failed one were written and their
// outcomes are returned; a rerun finds their ledger entries. A target that
// refuses the caller's routing refuses the whole batch, as EnqueueJobs.
func (s *Store) Import(ctx context.Context, to Target, ledger string, jobs []ImportJob) ([]Imported, error) {
	k := s.Keys(to.Partition)
	version := ""
	if to.Version >= 0 {
		version = strconv.FormatInt(to.Version, 10)
	}
	keys := []string{k.Jobs, k.Due, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings, k.Dead, ledger}
	var calls []script.Call
	now := time.Now()
	for batch := range slices.Chunk(jobs, MaxBatch) {
		args := make([]string, 0, 3+len(batch)*11)
		args = append(args, k.Wake, strconv.Itoa(len(batch)), version)
		for i := range batch {
			j := &batch[i]
			at := j.At
			if at.IsZero() {
				at = now
			}
			died := int64(-1)
			if !j.DiedAt.IsZero() {
				died = j.DiedAt.UnixMilli()
			}
			opts := ""
			if j.Priority != PriorityNormal || j.Unique.Key != "" {
				n := j.NewJob
				n.CallerID = false
				opts = n.options()
			}
			args = append(args, j.Member, j.ID, strconv.FormatInt(max(at.UnixMilli(), 0), 10),
				strconv.Itoa(j.Attempts), strconv.Itoa(j.MaxAttempts), strconv.FormatInt(j.Timeout.Milliseconds(), 10),
				j.LastError, strconv.FormatInt(died, 10), opts, EncodeHeaders(j.Headers), string(j.Payload))
		}
		calls = append(calls, script.Call{Keys: keys, Args: args})
	}
	out := make([]Imported, 0, len(jobs))
	for i, res := range script.Import.ExecMulti(ctx, s.c, calls...) {
		vals, err := res.ToArray()
		if err != nil {
			return out, fmt.Errorf("import batch %d: %w", i+1, layoutRefusal(markOOM(err)))
		}
		for _, v := range vals {
			if n, err := v.ToInt64(); err == nil {
				out = append(out, Imported{Outcome: ImportOutcome(n)})
				continue
			}
			holder, _ := v.ToString()
			out = append(out, Imported{Outcome: ImportSkippedUnique, Holder: holder})
		}
	}
	return out, nil
}

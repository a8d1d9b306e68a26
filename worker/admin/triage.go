package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// triageSample is the most ids a TriageResult's Sample holds.
const triageSample = 20

// TriageAction is what a triage does to the dead (or cancelled) jobs it
// selects (TriageParams.Action).
type TriageAction string

// The triage actions.
const (
	// TriageRequeue moves the selected jobs back to due now, with their
	// attempts reset and their last errors kept.
	TriageRequeue TriageAction = "requeue"
	// TriagePurge deletes the selected jobs for good; a job of another
	// state is never deleted.
	TriagePurge TriageAction = "purge"
)

// TriageParams selects dead (or cancelled) jobs of a queue and says what
// to do with them (Triage), for operators and their tools.
type TriageParams struct {
	// Queue is the queue whose dead set is triaged. Required.
	Queue string
	// State is the set triaged: worker.StateDead (also when empty) or
	// worker.StateCancelled, whose cancel times Filter reads as times of
	// death.
	State worker.State
	// Action is TriageRequeue or TriagePurge. Required.
	Action TriageAction
	// IDs selects these jobs (1 to 1000 ids, each valid; a repeated id
	// counts once); ids not in the set are skipped and not counted.
	// Leave Filter zero with IDs.
	IDs []string
	// Filter, when IDs is empty, selects every job of the set it matches
	// (the zero Filter: every one), among those in the set when the walk
	// started.
	Filter DeadFilter
	// DryRun counts and samples what would change, and changes nothing.
	DryRun bool
	// Cursor resumes a walk from a previous TriageResult.Next, given with
	// the same selection; "" starts it.
	Cursor string
	// Max stops the call after this many matched jobs and returns Next; 0
	// = no limit.
	Max int
}

// TriageResult is what a Triage did.
type TriageResult struct {
	// Matched counts the dead jobs selected, as this call saw them.
	Matched int
	// Changed counts the jobs requeued or purged (0 on a dry run): fewer
	// than Matched when some left the dead set in the meantime.
	Changed int
	// Sample holds the ids of the first (up to 20) matched jobs.
	Sample []string
	// Next is "" when the walk is done; else the TriageParams.Cursor that
	// resumes it: after Max matched jobs, or with an error (what was done
	// before the error is counted, and the walk resumes with the work the
	// error interrupted).
	Next string
}

// Triage requeues (TriageRequeue) or purges (TriagePurge) the selected
// dead jobs of a queue, or its cancelled jobs (TriageParams.State). A requeue moves them back to due now, with their
// attempts reset and their last errors kept; a purge deletes them for
// good, and never a job that is due or active. A walk of a Filter covers
// the jobs dead when it started (by the Redis clock, to the ms; the bound
// travels in Next): jobs that die later are left dead, so it ends even
// while requeued jobs keep failing, and a purge spares a job that was
// requeued meanwhile and died again. Each Redis call handles at most
// 1,000 jobs. Bad arguments are a *worker.ValidationError naming "Queue",
// "State", "Action", "IDs", "IDs[i]", "Filter" or a field of it, "Cursor" or "Max".
func (c *Client) Triage(ctx context.Context, p TriageParams) (TriageResult, error) {
	set, ok := triaged(p.State)
	var f triageFunc
	switch p.Action {
	case TriageRequeue:
		f = func(partition string, ids []string, _ time.Time) ([]bool, error) {
			return c.core.St.Requeue(ctx, partition, set, ids)
		}
	case TriagePurge:
		f = func(partition string, ids []string, until time.Time) ([]bool, error) {
			return c.core.St.Purge(ctx, partition, set, ids, until)
		}
	}
	if err := worker.ValidateQueueName(p.Queue); err != nil {
		return TriageResult{}, err
	}
	if !ok {
		return TriageResult{}, invalid("State", "must be %q or %q (got %q)", worker.StateDead, worker.StateCancelled, p.State)
	}
	if f == nil {
		return TriageResult{}, invalid("Action", "must be %q or %q (got %q)", TriageRequeue, TriagePurge, p.Action)
	}
	return c.triage(ctx, p, f)
}

// triaged returns the store's set of a triage's state; ok is false for a
// state no triage takes.
func triaged(s worker.State) (set store.Set, ok bool) {
	switch s {
	case worker.StateDead, "":
		return store.SetDead, true
	case worker.StateCancelled:
		return store.SetCancelled, true
	}
	return "", false
}

// triageFunc changes the dead (or cancelled) jobs ids (at most 1,000) of a partition of
// the queue (the queue itself when it has one), sparing those that died
// after until (zero: none spared), and reports which it changed.
type triageFunc func(partition string, ids []string, until time.Time) ([]bool, error)

// triage checks the rest of its arguments and runs the walk of p.
func (c *Client) triage(ctx context.Context, p TriageParams, f triageFunc) (TriageResult, error) {
	ids, err := selectedIDs(p)
	if err != nil {
		return TriageResult{}, err
	}
	if p.Max < 0 {
		return TriageResult{}, invalid("Max", "must not be negative (got %d)", p.Max)
	}
	parts, err := c.core.Layer.Partitions(ctx, p.Queue)
	if err != nil {
		return TriageResult{}, err
	}
	t := &triageRun{opt: p, f: f, parts: parts}
	if ids == nil && len(parts) > 1 {
		return t.walkPartitions(ctx, c, p.Filter)
	}
	cur, err := parseTriageCursor(ids != nil, len(ids), p.Cursor)
	if err != nil {
		return TriageResult{}, err
	}
	if ids != nil {
		return t.ids(ctx, c, ids, cur.done)
	}
	return t.walk(ctx, c, p.Queue, p.Filter, cur)
}

// walkPartitions walks a filter over the partitions of a queue of several,
// one after another, the cursor saying which partition and where in it.
func (t *triageRun) walkPartitions(ctx context.Context, c *Client, f DeadFilter) (TriageResult, error) {
	i, inner, err := parsePartitionCursor(t.opt.Cursor, len(t.parts))
	if err != nil {
		return TriageResult{}, err
	}
	for ; i < len(t.parts); i++ {
		cur, err := parseTriageCursor(false, 0, inner)
		if err != nil {
			return TriageResult{}, err
		}
		t.opt.Cursor = inner
		res, err := t.walk(ctx, c, t.parts[i], f, cur)
		if res.Next != "" {
			t.res.Next = partitionIndexCursor(i, res.Next)
			return t.res, err
		}
		if err != nil {
			return t.res, err
		}
		inner = ""
		if t.opt.Max > 0 && t.res.Matched >= t.opt.Max && i+1 < len(t.parts) {
			t.res.Next = partitionIndexCursor(i+1, "")
			return t.res, nil
		}
	}
	return t.res, nil
}

// selectedIDs returns the distinct ids of p, in their order; nil for a
// Filter selection.
func selectedIDs(sel TriageParams) ([]string, error) {
	if len(sel.IDs) == 0 {
		return nil, sel.Filter.validate("Filter")
	}
	if !sel.Filter.IsZero() {
		return nil, invalid("Filter", "must be zero when IDs are given")
	}
	if len(sel.IDs) > store.MaxBatch {
		return nil, invalid("IDs", "must hold 1 to %d ids (got %d)", store.MaxBatch, len(sel.IDs))
	}
	seen := make(map[string]bool, len(sel.IDs))
	ids := make([]string, 0, len(sel.IDs))
	for i, id := range sel.IDs {
		if err := worker.ValidateID(id); err != nil {
			var ve *worker.ValidationError
			if errors.As(err, &ve) { // named by its place, not "ID"
				err = invalid(fmt.Sprintf("IDs[%d]", i), "%s", ve.Reason)
			}
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// triageRun is one Triage call underway.
type triageRun struct {
	opt   TriageParams
	f     triageFunc
	parts []string // the queue's partitions; one: the queue itself
	res   TriageResult
}

// room returns how many more jobs the call may match.
func (t *triageRun) room() int {
	if t.opt.Max == 0 {
		return store.MaxBatch
	}
	return min(t.opt.Max-t.res.Matched, store.MaxBatch)
}

// apply counts the matched ids of partition and, unless on a dry run,
// changes them.
func (t *triageRun) apply(partition string, ids []string, until time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	if !t.opt.DryRun {
		done, err := t.f(partition, ids, until)
		t.res.Changed += count(done)
		if err != nil {
			return err
		}
	}
	t.matched(ids)
	return nil
}

// matched counts ids as matched and samples them.
func (t *triageRun) matched(ids []string) {
	t.res.Matched += len(ids)
	t.res.Sample = append(t.res.Sample, ids[:min(len(ids), triageSample-len(t.res.Sample))]...)
}

// ids triages the ids after the first done: those that are dead, up to Max.
func (t *triageRun) ids(ctx context.Context, c *Client, ids []string, done int) (TriageResult, error) {
	resume := formatTriageCursor(true, triageCursor{done: done})
	rest := ids[done:]
	if !t.opt.DryRun && t.room() >= len(rest) {
		// Nothing to count before changing and no Max to stop at: the
		// script itself tells which ids were dead, in one round trip per
		// partition.
		var picked []string
		left := rest
		var err error
		for _, p := range t.parts {
			var changed []bool
			changed, err = t.f(p, left, time.Time{})
			next := left[:0:0]
			for i, id := range left {
				if i < len(changed) && changed[i] {
					picked = append(picked, id)
				} else {
					next = append(next, id)
				}
			}
			if left = next; err != nil || len(left) == 0 {
				break
			}
		}
		t.res.Changed += len(picked)
		t.matched(picked)
		if err != nil {
			t.res.Next = resume
		}
		return t.res, err
	}
	// A dry run, or a Max within the ids: find the dead ones first, and
	// the partition of each.
	where := make([]string, len(rest))
	for _, p := range t.parts {
		set, _ := triaged(t.opt.State)
		dead, err := c.core.St.DeadAmong(ctx, p, set, rest)
		if err != nil {
			t.res.Next = resume
			return t.res, err
		}
		for i, ok := range dead {
			if ok && where[i] == "" {
				where[i] = p
			}
		}
	}
	picked := map[string][]string{}
	n, next := 0, len(ids)
	for i, id := range rest {
		if n == t.room() {
			next = done + i
			break
		}
		if where[i] != "" {
			picked[where[i]] = append(picked[where[i]], id)
			n++
		}
	}
	for _, p := range t.parts {
		if err := t.apply(p, picked[p], time.Time{}); err != nil {
			t.res.Next = resume
			return t.res, err
		}
	}
	if next < len(ids) {
		t.res.Next = formatTriageCursor(true, triageCursor{done: next})
	}
	return t.res, nil
}

// walk triages the dead jobs of one partition (queue: the queue itself
// when it has one) matching f from cur, 1,000 (or Max) at a time, up to
// Max.
func (t *triageRun) walk(ctx context.Context, c *Client, queue string, f DeadFilter, cur triageCursor) (TriageResult, error) {
	resume := func() string {
		if cur.until.IsZero() {
			return t.opt.Cursor // the walk has not started: start it again
		}
		return formatTriageCursor(false, cur)
	}
	for {
		set, _ := triaged(t.opt.State)
		page, err := c.core.St.Dead(ctx, queue, store.DeadQuery{
			Set: set, After: cur.after, Limit: t.room(), IDsOnly: true, Filter: f.toStore(),
			UntilNow: cur.until.IsZero(), Until: cur.until,
		})
		if err != nil {
			t.res.Next = resume()
			return t.res, err
		}
		if cur.until.IsZero() {
			cur.until = page.Now
		}
		ids := make([]string, len(page.Jobs))
		for i, j := range page.Jobs {
			ids[i] = j.Record.ID
		}
		if err := t.apply(queue, ids, cur.until); err != nil {
			t.res.Next = resume()
			return t.res, err
		}
		if page.Next.IsZero() {
			return t.res, nil
		}
		cur.after = page.Next
		if t.opt.Max > 0 && t.res.Matched >= t.opt.Max {
			t.res.Next = formatTriageCursor(false, cur)
			return t.res, nil
		}
	}
}

// count returns how many flags are set.
func count(flags []bool) int {
	n := 0
	for _, ok := range flags {
		if ok {
			n++
		}
	}
	return n
}

package store

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Listing names what List reads: the jobs of a queue in one state.
type Listing string

// What List reads. The dead and cancelled sets are read by Dead.
const (
	ListReady     Listing = "ready"     // due at or before the Redis clock's now
	ListScheduled Listing = "scheduled" // due later
	ListActive    Listing = "active"    // claimed, under a lease
	ListCompleted Listing = "completed" // finished and retained (Complete), newest first
)

// ListCursor is a position in a listing: the last job a page returned. The
// zero value is the start.
type ListCursor struct {
	Level Priority  // the job's level (ListReady only)
	Score time.Time // run-at, lease deadline or finish time, whole ms
	ID    string
}

// IsZero reports whether c is the start.
func (c ListCursor) IsZero() bool { return c.ID == "" }

// ListQuery selects one page of a listing.
type ListQuery struct {
	What Listing
	// After is the position the page starts strictly after, whether or not
	// its job is still there.
	After ListCursor
	// Limit is the most jobs on the page, 1 to MaxBatch.
	Limit int
	// MaxBytes bounds the page's records; 0 means DeadPageBytes.
	MaxBytes int
}

// ListedJob is one job of a listing.
type ListedJob struct {
	// Record has the job's options (Priority, Unique); for an active job
	// Claim, Worker and the running attempt in Attempt; for a completed
	// one Result and the attempt that succeeded in Attempt.
	// Only the ID when Err is set.
	Record Record
	// Score is the run-at (ready, scheduled), lease deadline (active) or
	// finish time (completed).
	Score time.Time
	// Err says why the record could not be read (it wraps ErrCorrupt): the
	// job is listed anyway.
	Err error
}

// ListPage is one page of a listing.
type ListPage struct {
	Now  time.Time // the Redis clock when the page was read
	Jobs []ListedJob
	// Next is the position of the page's last job when more jobs follow it;
	// zero when the page reached the end.
	Next ListCursor
}

// listWidth is how many values list.lua returns per job.
const listWidth = 8

// List reads one page of the ready, scheduled, active or completed jobs of
// queue, in the orders of lua/list.lua: ready as a strict-priority claim
// takes them, scheduled by run-at across the levels, active by lease
// deadline, completed newest finish first.
func (s *Store) List(ctx context.Context, queue string, q ListQuery) (ListPage, error) {
	k := s.Keys(queue)
	var level, score string
	if !q.After.IsZero() {
		level, score = levelLetter(q.After.Level, q.What), msArg(q.After.Score)
	}
	args := []string{string(q.What), strconv.Itoa(q.Limit), level, score, q.After.ID, strconv.Itoa(cmp.Or(q.MaxBytes, DeadPageBytes))}
	keys := []string{k.Jobs, k.Due, k.DueHigh, k.DueLow, k.Active, k.State, k.Claims, k.Opts, k.Completed, k.Results, k.KeyIDs}
	vals, err := script.List.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return ListPage{}, fmt.Errorf("list %s jobs of %s: %w", q.What, queue, err)
	}
	if len(vals) < 2 || (len(vals)-2)%listWidth != 0 {
		return ListPage{}, fmt.Errorf("list %s jobs of %s: unexpected reply of %d values", q.What, queue, len(vals))
	}
	now, err1 := vals[0].AsInt64()
	more, err2 := vals[1].AsInt64()
	if err1 != nil || err2 != nil {
		return ListPage{}, fmt.Errorf("list %s jobs of %s: unexpected reply head %v %v", q.What, queue, vals[0], vals[1])
	}
	page := ListPage{Now: time.UnixMilli(now), Jobs: make([]ListedJob, 0, (len(vals)-2)/listWidth)}
	var last ListCursor
	for i := 2; i < len(vals); i += listWidth {
		id, err1 := vals[i].ToString()
		lv, _ := vals[i+1].ToString()
		ms, err2 := vals[i+2].AsInt64()
		if err1 != nil || err2 != nil {
			return ListPage{}, fmt.Errorf("list %s jobs of %s: unexpected job %v %v", q.What, queue, vals[i], vals[i+2])
		}
		st, _ := vals[i+4].ToString()
		opts, _ := vals[i+5].ToString()
		claim, _ := vals[i+6].ToString()
		result, _ := vals[i+7].ToString()
		j := ListedJob{Score: time.UnixMilli(ms)}
		j.Record, j.Err = readRecord(id, vals[i+3], st, opts)
		if q.What == ListCompleted && j.Err == nil {
			completed(&j.Record, result)
		}
		if q.What == ListActive && j.Err == nil {
			tok, worker, _ := strings.Cut(claim, "@")
			if n, err := strconv.ParseInt(tok, 10, 64); err == nil && n > 0 {
				j.Record.Claim = n
				j.Record.Worker, j.Record.Progress = splitWorker(worker)
				j.Record.Attempt++ // the running attempt
			}
		}
		page.Jobs = append(page.Jobs, j)
		last = ListCursor{Score: j.Score, ID: id}
		if q.What == ListReady {
			last.Level = priorityOf(lv)
		}
	}
	if more == 1 && len(page.Jobs) > 0 {
		page.Next = last
	}
	return page, nil
}

// levelLetter is the cursor level list.lua takes for p: its letter for
// ListReady, "" otherwise.
func levelLetter(p Priority, what Listing) string {
	if what != ListReady {
		return ""
	}
	return p.Letter()
}

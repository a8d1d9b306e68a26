package store

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// DeadPageBytes bounds the records of one page of a dead set: a page ends
// before the record that would take it past this size, so a page of large
// payloads may hold fewer jobs than its limit. It always holds one.
const DeadPageBytes = 16 << 20

// DeadCursor is a position in a dead set, which is ordered by time of death,
// then by id bytes: the position of the last job a page returned. The zero
// value is the start of the set.
type DeadCursor struct {
	DiedAt time.Time // whole ms
	ID     string
}

// IsZero reports whether c is the start of the set.
func (c DeadCursor) IsZero() bool { return c.ID == "" }

// DeadQuery selects one page of a dead set.
type DeadQuery struct {
	// After is the position the page starts strictly after, whether or not
	// its job is still in the set.
	After DeadCursor
	// Limit is the most jobs on the page, 1 to MaxBatch.
	Limit int
	// Until, when not zero, leaves out jobs that died after it.
	Until time.Time
	// UntilNow leaves out jobs that died after the Redis clock of this call
	// (DeadPage.Now); it overrides Until.
	UntilNow bool
	// IDsOnly leaves the records out: the jobs carry their ids only.
	IDsOnly bool
	// MaxBytes bounds the page's records; 0 means DeadPageBytes.
	MaxBytes int
}

// DeadJob is one job of a dead set.
type DeadJob struct {
	Record Record // only the ID with DeadQuery.IDsOnly, or when Err is set
	DiedAt time.Time
	// Err says why the record could not be read: it is missing or does not
	// decode (it wraps ErrCorrupt). The job is listed anyway, so that it can
	// be purged.
	Err error
}

// DeadPage is one page of a dead set.
type DeadPage struct {
	// Now is the Redis clock when the page was read, in whole ms: the Until
	// of a walk over the jobs that were dead then.
	Now  time.Time
	Jobs []DeadJob
	// Next is the position of the page's last job when more jobs follow it
	// (within Until); zero when the page reached the end.
	Next DeadCursor
}

// msArg formats t as whole ms for a script.
func msArg(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// Dead reads one page of the dead set of queue, oldest death first.
func (s *Store) Dead(ctx context.Context, queue string, q DeadQuery) (DeadPage, error) {
	k := s.Keys(queue)
	mode, per := "jobs", 4
	if q.IDsOnly {
		mode, per = "ids", 2
	}
	var cursorMs, until string
	if !q.After.IsZero() {
		cursorMs = msArg(q.After.DiedAt)
	}
	switch {
	case q.UntilNow:
		until = "now"
	case !q.Until.IsZero():
		until = msArg(q.Until)
	}
	args := []string{strconv.Itoa(q.Limit), mode, cursorMs, q.After.ID, until, strconv.Itoa(cmp.Or(q.MaxBytes, DeadPageBytes))}
	vals, err := script.DeadList.Exec(ctx, s.c, []string{k.Jobs, k.Dead, k.State}, args).ToArray()
	if err != nil {
		return DeadPage{}, fmt.Errorf("list dead jobs of %s: %w", queue, err)
	}
	if len(vals) < 2 || (len(vals)-2)%per != 0 {
		return DeadPage{}, fmt.Errorf("list dead jobs of %s: unexpected reply of %d values", queue, len(vals))
	}
	now, err1 := vals[0].AsInt64()
	more, err2 := vals[1].AsInt64()
	if err1 != nil || err2 != nil {
		return DeadPage{}, fmt.Errorf("list dead jobs of %s: unexpected reply head %v %v", queue, vals[0], vals[1])
	}
	page := DeadPage{Now: time.UnixMilli(now), Jobs: make([]DeadJob, 0, (len(vals)-2)/per)}
	for i := 2; i < len(vals); i += per {
		id, err1 := vals[i].ToString()
		died, err2 := vals[i+1].AsInt64()
		if err1 != nil || err2 != nil {
			return DeadPage{}, fmt.Errorf("list dead jobs of %s: unexpected job %v %v", queue, vals[i], vals[i+1])
		}
		j := DeadJob{Record: Record{ID: id}, DiedAt: time.UnixMilli(died)}
		if !q.IDsOnly {
			raw, err := vals[i+2].ToString()
			switch {
			case rueidis.IsRedisNil(err):
				j.Err = fmt.Errorf("job %q: %w: no record", id, ErrCorrupt)
			case err != nil:
				return DeadPage{}, fmt.Errorf("list dead jobs of %s: job %q: %w", queue, id, err)
			default:
				st, _ := vals[i+3].ToString()
				if j.Record, j.Err = decodeJob(id, raw, st); j.Err != nil {
					j.Record = Record{ID: id}
				}
			}
		}
		page.Jobs = append(page.Jobs, j)
	}
	if more == 1 && len(page.Jobs) > 0 {
		last := page.Jobs[len(page.Jobs)-1]
		page.Next = DeadCursor{DiedAt: last.DiedAt, ID: last.Record.ID}
	}
	return page, nil
}

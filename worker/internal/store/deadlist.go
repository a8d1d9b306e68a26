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

// DeadQuery selects one page of a dead set, or of a cancelled set (Set),
// whose cancel times are read as times of death.
type DeadQuery struct {
	// Set is SetDead (also when empty) or SetCancelled.
	Set Set
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
	// Filter leaves out the jobs it does not match. With an error filter a
	// call examines up to MaxBatch jobs, so a page may hold fewer than Limit
	// jobs (none, even) and still have a Next.
	Filter DeadFilter
	// IDsOnly leaves the records out: the jobs carry their ids only.
	IDsOnly bool
	// MaxBytes bounds the page's records; 0 means DeadPageBytes.
	MaxBytes int
}

// DeadFilter selects dead jobs; the zero value selects all.
type DeadFilter struct {
	// ErrorContains keeps the jobs whose last error holds it, compared
	// without regard to ASCII case; "" = any. At most MaxErrorFilter bytes.
	ErrorContains string
	// After keeps the jobs that died strictly after it (whole ms, rounded
	// down); zero = no bound.
	After time.Time
	// AtOrBefore keeps the jobs that died at or before it (whole ms, rounded
	// down); zero = no bound. With Until or UntilNow, the earlier holds.
	AtOrBefore time.Time
}

// MaxErrorFilter is the longest DeadFilter.ErrorContains, in bytes.
const MaxErrorFilter = 256

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
	// Next is where the next page starts after when more jobs may follow
	// (within Until): the page's last job, or with an error filter the last
	// job examined; zero when the page reached the end.
	Next DeadCursor
}

// msArg formats t as whole ms for a script.
func msArg(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// Dead reads one page of the dead set of queue, oldest death first, or of
// its cancelled set (q.Set), oldest cancel first.
func (s *Store) Dead(ctx context.Context, queue string, q DeadQuery) (DeadPage, error) {
	k := s.Keys(queue)
	set, err := k.Kept(q.Set)
	if err != nil {
		return DeadPage{}, err
	}
	mode, per := "jobs", 5
	if q.IDsOnly {
		mode, per = "ids", 2
	}
	var cursorMs, until, after, before string
	if !q.After.IsZero() {
		cursorMs = msArg(q.After.DiedAt)
	}
	switch {
	case q.UntilNow:
		until = "now"
	case !q.Until.IsZero():
		until = msArg(q.Until)
	}
	if f := q.Filter; !f.After.IsZero() {
		after = msArg(f.After)
	}
	if f := q.Filter; !f.AtOrBefore.IsZero() {
		before = msArg(f.AtOrBefore)
	}
	args := []string{strconv.Itoa(q.Limit), mode, cursorMs, q.After.ID, until, strconv.Itoa(cmp.Or(q.MaxBytes, DeadPageBytes)),
		after, before, asciiLower(q.Filter.ErrorContains)}
	vals, err := script.DeadList.Exec(ctx, s.c, []string{k.Jobs, set, k.State, k.Opts}, args).ToArray()
	if err != nil {
		return DeadPage{}, fmt.Errorf("list dead jobs of %s: %w", queue, err)
	}
	if len(vals) < 4 || (len(vals)-4)%per != 0 {
		return DeadPage{}, fmt.Errorf("list dead jobs of %s: unexpected reply of %d values", queue, len(vals))
	}
	now, err1 := vals[0].AsInt64()
	more, err2 := vals[1].AsInt64()
	curMs, _ := vals[2].ToString()
	curID, _ := vals[3].ToString()
	if err1 != nil || err2 != nil {
		return DeadPage{}, fmt.Errorf("list dead jobs of %s: unexpected reply head %v %v", queue, vals[0], vals[1])
	}
	page := DeadPage{Now: time.UnixMilli(now), Jobs: make([]DeadJob, 0, (len(vals)-4)/per)}
	for i := 4; i < len(vals); i += per {
		id, err1 := vals[i].ToString()
		died, err2 := vals[i+1].AsInt64()
		if err1 != nil || err2 != nil {
			return DeadPage{}, fmt.Errorf("list dead jobs of %s: unexpected job %v %v", queue, vals[i], vals[i+1])
		}
		j := DeadJob{Record: Record{ID: id}, DiedAt: time.UnixMilli(died)}
		if !q.IDsOnly {
			st, _ := vals[i+3].ToString()
			opts, _ := vals[i+4].ToString()
			j.Record, j.Err = readRecord(id, vals[i+2], st, opts)
		}
		page.Jobs = append(page.Jobs, j)
	}
	if more == 1 {
		ms, err := strconv.ParseInt(curMs, 10, 64)
		if err != nil || curID == "" {
			return DeadPage{}, fmt.Errorf("list dead jobs of %s: unexpected cursor %q %q", queue, curMs, curID)
		}
		page.Next = DeadCursor{DiedAt: time.UnixMilli(ms), ID: curID}
	}
	return page, nil
}

// readRecord decodes a listed job's record (a Redis nil when it has none),
// state and options entries. On an error it returns the Record with the
// id only and an error wrapping ErrCorrupt.
func readRecord(id string, raw rueidis.RedisMessage, st, opts string) (Record, error) {
	s, err := raw.ToString()
	if rueidis.IsRedisNil(err) {
		return Record{ID: id}, fmt.Errorf("job %q: %w: no record", id, ErrCorrupt)
	}
	if err != nil {
		return Record{ID: id}, fmt.Errorf("job %q: %w: %w", id, ErrCorrupt, err)
	}
	r, err := decodeJob(id, s, st)
	if err == nil {
		err = decodeOpts(&r, opts)
	}
	if err != nil {
		return Record{ID: id}, err
	}
	return r, nil
}

// asciiLower lowers the ASCII letters of s, as Lua's string.lower does on
// Redis (the C locale), and nothing else.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// DeadAmong reports, for each of ids (at most MaxBatch), whether it is in
// the dead set of queue, or its cancelled set (from): one ZMSCORE, which
// reads and changes nothing else.
func (s *Store) DeadAmong(ctx context.Context, queue string, from Set, ids []string) ([]bool, error) {
	set, err := s.Keys(queue).Kept(from)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > MaxBatch {
		return nil, fmt.Errorf("dead jobs of %s: %d ids, at most %d per call", queue, len(ids), MaxBatch)
	}
	vals, err := s.c.Do(ctx, s.c.B().Zmscore().Key(set).Member(ids...).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("dead jobs of %s: %w", queue, err)
	}
	if len(vals) != len(ids) {
		return nil, fmt.Errorf("dead jobs of %s: %d scores for %d ids", queue, len(vals), len(ids))
	}
	out := make([]bool, len(ids))
	for i, v := range vals {
		out[i] = !v.IsNil()
	}
	return out, nil
}

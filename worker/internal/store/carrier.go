package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/lua"
)

// The carrier's scripts. Each checks first that the caller's field is in the
// queue's leader hash (fencing) and changes nothing otherwise.
var (
	scriptRecover = rueidis.NewLuaScript(lua.Recover)
	scriptTrim    = rueidis.NewLuaScript(lua.Trim)
	scriptFire    = rueidis.NewLuaScript(lua.Fire)
)

// ErrNotLeader says a fenced call found that the caller no longer holds the
// queue's leader lock; it changed nothing.
var ErrNotLeader = errors.New("not the queue's leader (the leader lock is held by another process or by none)")

// Recovered counts what one Recover call did.
type Recovered struct {
	Due  int // back to due, attempt still spent
	Dead int // out of attempts: moved to dead
}

// Recover returns up to limit jobs of queue whose lease expired to due, or to
// dead when they have no attempts left (defaultMax applies to jobs enqueued
// without their own max attempts). leader is the caller's field in the
// queue's leader lock; a caller that lost the lock gets ErrNotLeader.
func (s *Store) Recover(ctx context.Context, queue, leader string, limit, defaultMax int) (Recovered, error) {
	k := s.Keys(queue)
	a, b, err := fencedPair(scriptRecover.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.Leader},
		[]string{k.Wake, strconv.Itoa(min(limit, MaxBatch)), strconv.Itoa(defaultMax), leader}))
	if err != nil {
		return Recovered{}, fmt.Errorf("recover %s: %w", queue, err)
	}
	return Recovered{Due: a, Dead: b}, nil
}

// fencedPair reads the {a, b} reply of a fenced carrier script; {-1, 0}
// means the caller is not the leader.
func fencedPair(res rueidis.RedisResult) (a, b int, err error) {
	n, err := res.AsIntSlice()
	switch {
	case err != nil:
		return 0, 0, err
	case len(n) != 2:
		return 0, 0, fmt.Errorf("unexpected reply of %d values", len(n))
	case n[0] == -1:
		return 0, 0, ErrNotLeader
	}
	return int(n[0]), int(n[1]), nil
}

// Trimmed counts what one TrimDead call deleted.
type Trimmed struct {
	ByAge   int // dead for longer than the age limit
	ByCount int // the oldest beyond the count limit
}

// TrimDead deletes up to limit dead jobs of queue: first those that died
// more than maxAge ago, then the oldest beyond maxJobs. Fenced like Recover.
func (s *Store) TrimDead(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (Trimmed, error) {
	k := s.Keys(queue)
	a, b, err := fencedPair(scriptTrim.Exec(ctx, s.c, []string{k.Jobs, k.Dead, k.Leader},
		[]string{leader, strconv.Itoa(maxJobs), strconv.FormatInt(max(maxAge.Milliseconds(), 1), 10), strconv.Itoa(min(limit, MaxBatch))}))
	if err != nil {
		return Trimmed{}, fmt.Errorf("trim dead %s: %w", queue, err)
	}
	return Trimmed{ByAge: a, ByCount: b}, nil
}

// Fire is one fire of a periodic job.
type Fire struct {
	Schedule    string
	At          time.Time // the fire time; its job is due then
	Payload     []byte
	MaxAttempts int           // 0 = the queue's
	Timeout     time.Duration // 0 = the queue's
}

// FireResult says what a Fire call did.
type FireResult struct {
	Fired bool      // the job was enqueued
	Early bool      // At is still ahead of the Redis clock: nothing changed
	Now   time.Time // the Redis clock
}

// FireID is the id of the job of a schedule's fire at a time.
func FireID(schedule string, at time.Time) string {
	return "periodic:" + schedule + ":" + strconv.FormatInt(at.UnixMilli(), 10)
}

// Fire enqueues the fire f of a periodic job of queue, unless this fire or a
// later one of the schedule was made already. Fenced like Recover.
func (s *Store) Fire(ctx context.Context, queue, leader string, f Fire) (FireResult, error) {
	k := s.Keys(queue)
	n, err := scriptFire.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Periodic, k.Leader}, []string{
		leader, k.Wake, f.Schedule, strconv.FormatInt(f.At.UnixMilli(), 10),
		strconv.Itoa(f.MaxAttempts), strconv.FormatInt(f.Timeout.Milliseconds(), 10), string(f.Payload),
	}).AsIntSlice()
	if err != nil {
		return FireResult{}, fmt.Errorf("fire %s/%s: %w", queue, f.Schedule, err)
	}
	if len(n) != 2 {
		return FireResult{}, fmt.Errorf("fire %s/%s: unexpected reply of %d values", queue, f.Schedule, len(n))
	}
	now := time.UnixMilli(n[1])
	switch n[0] {
	case -1:
		return FireResult{}, fmt.Errorf("fire %s/%s: %w", queue, f.Schedule, ErrNotLeader)
	case -2:
		return FireResult{Early: true, Now: now}, nil
	}
	return FireResult{Fired: n[0] == 1, Now: now}, nil
}

// LastFire returns the time of the last fire of schedule in queue, if any.
func (s *Store) LastFire(ctx context.Context, queue, schedule string) (time.Time, bool, error) {
	ms, err := s.c.Do(ctx, s.c.B().Hget().Key(s.Keys(queue).Periodic).Field(schedule).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("last fire of %s/%s: %w", queue, schedule, err)
	}
	return time.UnixMilli(ms), true, nil
}

package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Fire is one fire of a periodic job.
type Fire struct {
	Schedule    string
	At          time.Time // the fire time; its job is due then
	Payload     []byte
	MaxAttempts int           // 0 = the queue's
	Timeout     time.Duration // 0 = the queue's
	// Headers are the job's headers (its kind travels there); nil for
	// none, and the record is then the one versions before headers read.
	Headers map[string]string
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
	args := []string{
		leader, k.Wake, f.Schedule, strconv.FormatInt(f.At.UnixMilli(), 10),
		strconv.Itoa(f.MaxAttempts), strconv.FormatInt(f.Timeout.Milliseconds(), 10), string(f.Payload),
	}
	if h := EncodeHeaders(f.Headers); h != "" {
		args = append(args, h)
	}
	n, err := script.Fire.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Periodic, k.Leader, k.State}, args).AsIntSlice()
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

// ForgetSchedules deletes the last-fire entries of queue's schedules that
// are not in keep and last fired before before: schedules removed from the
// configuration, whose entries would otherwise stay forever. It returns the
// names it deleted. Only the queue's leader calls it, and only the leader
// fires, so no fire races it.
func (s *Store) ForgetSchedules(ctx context.Context, queue string, keep []string, before time.Time) ([]string, error) {
	key := s.Keys(queue).Periodic
	all, err := s.c.Do(ctx, s.c.B().Hgetall().Key(key).Build()).AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("read the schedules of %s: %w", queue, err)
	}
	var gone []string
	for name, v := range all {
		ms, err := strconv.ParseInt(v, 10, 64)
		if slices.Contains(keep, name) || (err == nil && ms >= before.UnixMilli()) {
			continue
		}
		gone = append(gone, name)
	}
	if len(gone) == 0 {
		return nil, nil
	}
	slices.Sort(gone)
	if err := s.c.Do(ctx, s.c.B().Hdel().Key(key).Field(gone...).Build()).Error(); err != nil {
		return nil, fmt.Errorf("forget the schedules %v of %s: %w", gone, queue, err)
	}
	return gone, nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// PrefixesKey is the one key Courier keeps outside every key prefix: a
// zset of the prefixes that running daemons use, each scored with the
// Redis clock (ms) of its last report. It lets a producer on one prefix
// learn that the daemons run on another (worker.Client.CheckPrefix). It
// holds one member per prefix whose daemons reported within the window
// the reporters trim to, so it stays small; on a Redis Cluster it is one
// key in one slot.
const PrefixesKey = "courier:prefixes"

// ErrDenied matches the error of a prefix report that the Redis user's ACL
// refused (NOPERM): asking again will not help.
var ErrDenied = errors.New("refused by the Redis user's ACL")

// denied marks err with ErrDenied when Redis refused it with NOPERM.
func denied(err error) error {
	if re, ok := rueidis.IsRedisErr(err); ok && strings.HasPrefix(re.Error(), "NOPERM") {
		return fmt.Errorf("%w: %w", ErrDenied, err)
	}
	return err
}

// ReportPrefix records that a daemon serves under the Store's prefix now
// (by the Redis clock), and deletes the entries of prefixes not reported
// within window. It returns the prefixes live before this report, sorted,
// the Store's own included when another daemon had reported it. An error
// matches ErrDenied when the Redis user may not write the key.
//
// Two round trips: TIME, then the read, the ZADD and the trim in one
// pipeline on the key's node. The trim is by score, so a prefix that
// another daemon reports meanwhile is never removed.
func (s *Store) ReportPrefix(ctx context.Context, window time.Duration) (live []string, err error) {
	now, err := s.redisNow(ctx)
	if err != nil {
		return nil, fmt.Errorf("report key prefix: %w", denied(err))
	}
	cutoff := now - window.Milliseconds()
	res := s.c.DoMulti(ctx,
		s.c.B().Zrangebyscore().Key(PrefixesKey).Min(strconv.FormatInt(cutoff, 10)).Max("+inf").Build(),
		s.c.B().Zadd().Key(PrefixesKey).ScoreMember().ScoreMember(float64(now), s.prefix).Build(),
		s.c.B().Zremrangebyscore().Key(PrefixesKey).Min("-inf").Max("("+strconv.FormatInt(cutoff, 10)).Build(),
	)
	for _, r := range res {
		if err := r.Error(); err != nil {
			return nil, fmt.Errorf("report key prefix to %s: %w", PrefixesKey, denied(err))
		}
	}
	live, err = res[0].AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("report key prefix to %s: %w", PrefixesKey, err)
	}
	slices.Sort(live)
	return live, nil
}

// LivePrefixes returns the prefixes that daemons reported within window
// (by the Redis clock), sorted. It only reads: the daemons' reports trim
// the key.
func (s *Store) LivePrefixes(ctx context.Context, window time.Duration) ([]string, error) {
	now, err := s.redisNow(ctx)
	if err != nil {
		return nil, fmt.Errorf("read live key prefixes: %w", err)
	}
	cutoff := strconv.FormatInt(now-window.Milliseconds(), 10)
	live, err := s.c.Do(ctx, s.c.B().Zrangebyscore().Key(PrefixesKey).Min(cutoff).Max("+inf").Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("read live key prefixes from %s: %w", PrefixesKey, err)
	}
	slices.Sort(live)
	return live, nil
}

// redisNow reads the Redis clock, in ms since the epoch: every process
// scores and reads the prefixes by the same clock, so a skewed host clock
// makes no daemon look live or gone. On a Cluster TIME goes to any node;
// the nodes' clocks differ by far less than a report window.
func (s *Store) redisNow(ctx context.Context) (int64, error) {
	t, err := s.c.Do(ctx, s.c.B().Time().Build()).AsStrSlice()
	if err != nil {
		return 0, err
	}
	return parseTime(t)
}

// parseTime turns TIME's reply (seconds, microseconds) into ms.
func parseTime(t []string) (int64, error) {
	if len(t) != 2 {
		return 0, fmt.Errorf("TIME replied %d values", len(t))
	}
	sec, err := strconv.ParseInt(t[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("TIME seconds: %w", err)
	}
	usec, err := strconv.ParseInt(t[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("TIME microseconds: %w", err)
	}
	return sec*1000 + usec/1000, nil
}

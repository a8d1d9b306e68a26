package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// LagBuckets is the number of lag buckets of a minute of history: the
// bounds of lua/record.lua's lag_bucket, and a last, open bucket.
const LagBuckets = 12

// MaxHistoryMinutes is the most minutes one History call reads.
const MaxHistoryMinutes = 1440

// HistoryTrimBatch is how many minutes one TrimHistory call deletes at
// most (lua/history_trim.lua's LIMIT).
const HistoryTrimBatch = 60

// HistoryCounts is one minute of a queue's history (Keys.History).
type HistoryCounts struct {
	Minute    int64 // ms since the epoch / 60000, by the Redis clock
	Succeeded int64 // acked
	Retried   int64 // failed attempts back to due (retry, recover)
	Died      int64 // to dead: out of attempts, killed, corrupt records
	Lag       [LagBuckets]int64
}

// historyKinds are the kinds of a minute's fields, in HistoryCounts'
// order: s, r, d, then l0 to l11.
func historyKinds() []string {
	kinds := []string{"s", "r", "d"}
	for b := range LagBuckets {
		kinds = append(kinds, "l"+strconv.Itoa(b))
	}
	return kinds
}

// History reads count minutes of queue's history from fromMinute (ms
// since the epoch / 60000), oldest first, one entry per minute, zeros for
// a minute without activity, in one HMGET. count is 0 to
// MaxHistoryMinutes.
func (s *Store) History(ctx context.Context, queue string, fromMinute, count int64) ([]HistoryCounts, error) {
	if count < 0 || count > MaxHistoryMinutes {
		return nil, fmt.Errorf("history %s: %d minutes, want 0 to %d", queue, count, MaxHistoryMinutes)
	}
	if count == 0 {
		return []HistoryCounts{}, nil
	}
	kinds := historyKinds()
	fields := make([]string, 0, int(count)*len(kinds))
	for m := fromMinute; m < fromMinute+count; m++ {
		prefix := strconv.FormatInt(m, 10) + ":"
		for _, k := range kinds {
			fields = append(fields, prefix+k)
		}
	}
	vals, err := s.c.Do(ctx, s.c.B().Hmget().Key(s.Keys(queue).History).Field(fields...).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", queue, err)
	}
	if len(vals) != len(fields) {
		return nil, fmt.Errorf("history %s: %d values for %d fields", queue, len(vals), len(fields))
	}
	out := make([]HistoryCounts, count)
	for i := range out {
		h := &out[i]
		h.Minute = fromMinute + int64(i)
		for j := range kinds {
			v := vals[i*len(kinds)+j]
			if v.IsNil() {
				continue
			}
			n, err := v.AsInt64()
			if err != nil {
				return nil, fmt.Errorf("history %s: field %s: %w", queue, fields[i*len(kinds)+j], err)
			}
			switch j {
			case 0:
				h.Succeeded = n
			case 1:
				h.Retried = n
			case 2:
				h.Died = n
			default:
				h.Lag[j-3] = n
			}
		}
	}
	return out, nil
}

// TrimHistory deletes the minutes of queue's history older than retention
// (whole minutes, at least one) and returns how many it deleted, at most
// HistoryTrimBatch per call: a caller drains while it gets that many.
// Fenced like Recover.
func (s *Store) TrimHistory(ctx context.Context, queue, leader string, retention time.Duration) (int, error) {
	k := s.Keys(queue)
	n, err := script.HistoryTrim.Exec(ctx, s.c, []string{k.History, k.HistoryIndex, k.Leader},
		[]string{leader, strconv.FormatInt(max(int64(retention/time.Minute), 1), 10)}).AsInt64()
	switch {
	case err != nil:
		return 0, fmt.Errorf("trim history %s: %w", queue, err)
	case n == -1:
		return 0, fmt.Errorf("trim history %s: %w", queue, ErrNotLeader)
	}
	return int(n), nil
}

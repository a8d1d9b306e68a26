package admin

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// LagBounds returns the upper bounds of History's lag buckets: 1ms, 5ms,
// 10ms, 50ms, 100ms, 500ms, 1s, 5s, 10s, 1m, 5m; a last bucket holds the
// longer lags. A lag equal to a bound counts in that bound's bucket. Each
// call returns a fresh slice.
func LagBounds() []time.Duration {
	return []time.Duration{
		time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, 500 * time.Millisecond, time.Second, 5 * time.Second,
		10 * time.Second, time.Minute, 5 * time.Minute,
	}
}

// LagBuckets is the number of lag buckets: len(LagBounds()) + 1.
const LagBuckets = 12

// HistoryMaxMinutes is the most minutes one History call returns: a day.
const HistoryMaxMinutes = 1440

// HistoryMinute is one minute of a queue's history (Client.History).
type HistoryMinute struct {
	Start     time.Time // the minute's start, by the Redis clock
	Succeeded int64     // jobs acked
	Retried   int64     // failed attempts sent back to due (handler errors, expired leases)
	Died      int64     // jobs that went to dead (not cancellations)
	// Lag counts the jobs started in the minute by lag, the time from the
	// run-at a job was due at to its claim: Lag[i] those up to
	// LagBounds()[i] (and above the bound before), the last those above
	// 5m.
	Lag [LagBuckets]int64
}

// Failed is the attempts that failed in the minute: Retried + Died.
func (m HistoryMinute) Failed() int64 { return m.Retried + m.Died }

// Started is the jobs started in the minute: the sum of Lag.
func (m HistoryMinute) Started() int64 {
	var n int64
	for _, c := range m.Lag {
		n += c
	}
	return n
}

// History returns queue's minutes from from to to (both truncated to the
// minute; from inclusive, to exclusive), oldest first, one entry per
// minute, minutes without activity included with zeros. Minutes are those
// of the Redis clock: the scripts that claim, ack, retry and recover jobs
// count them as they run, in the queue's history (the keys
// <prefix>:{<queue>}:history and …:history:minutes), and the queue's
// leader deletes the minutes older than worker.Config.HistoryRetention. The
// minute in progress is included when to is after its start; its counts
// grow until it ends.
//
// At most HistoryMaxMinutes (1440, a day) minutes per call: a wider span,
// or to before from, is a *worker.ValidationError naming "To". One read (HMGET).
func (c *Client) History(ctx context.Context, queue string, from, to time.Time) ([]HistoryMinute, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return nil, err
	}
	first, end := unixMinute(from), unixMinute(to)
	switch {
	case end < first:
		return nil, invalid("To", "must not be before From (got %s, From %s)", to, from)
	case end-first > HistoryMaxMinutes:
		return nil, invalid("To", "must be at most %d minutes after From (got %d)", HistoryMaxMinutes, end-first)
	}
	var out []HistoryMinute
	err := c.core.EachPartition(ctx, queue, func(p string) error {
		counts, err := c.core.St.History(ctx, p, first, end-first)
		if err != nil {
			return err
		}
		if out == nil {
			out = make([]HistoryMinute, len(counts))
		}
		for i, h := range counts {
			if i >= len(out) {
				break
			}
			m := &out[i]
			m.Start = time.UnixMilli(h.Minute * 60000)
			m.Succeeded += h.Succeeded
			m.Retried += h.Retried
			m.Died += h.Died
			for b := range m.Lag {
				m.Lag[b] += h.Lag[b]
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// unixMinute returns the minute of t since the Unix epoch, rounded down.
func unixMinute(t time.Time) int64 {
	ms := t.UnixMilli()
	m := ms / 60000
	if ms%60000 < 0 {
		m--
	}
	return m
}

// LagQuantile estimates the q-quantile (0 < q < 1, e.g. 0.5, 0.99) of the
// lag of the jobs started in minutes, interpolating linearly within a
// bucket as Prometheus's histogram_quantile does (the first bucket from
// 0; a quantile in the last, open bucket returns the last bound, 5m). ok
// is false when no job started, and when q is not within (0, 1).
func LagQuantile(minutes []HistoryMinute, q float64) (lag time.Duration, ok bool) {
	if !(q > 0 && q < 1) {
		return 0, false
	}
	var cum [LagBuckets]int64 // cumulative counts, as Prometheus's buckets
	var total int64
	for i := range cum {
		for _, m := range minutes {
			total += m.Lag[i]
		}
		cum[i] = total
	}
	if total == 0 {
		return 0, false
	}
	bounds := LagBounds()
	rank := q * float64(total)
	// The first bucket whose cumulative count reaches the rank; none but
	// the open one: the last bound.
	b := sort.Search(len(bounds), func(i int) bool { return float64(cum[i]) >= rank })
	if b == len(bounds) {
		return bounds[len(bounds)-1], true
	}
	var lo time.Duration
	var below int64
	if b > 0 {
		lo, below = bounds[b-1], cum[b-1] // #nosec G602 -- 0 < b < len(bounds) < len(cum)
	}
	frac := (rank - float64(below)) / float64(cum[b]-below)
	return lo + time.Duration(math.Round(float64(bounds[b]-lo)*frac)), true
}

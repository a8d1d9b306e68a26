package ui

import (
	"context"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/admin"
)

// A minute of a queue's history is counted by the scripts as they run, by
// the Redis clock; once that clock has passed the minute, its counts never
// change. The charts show the last hour and refresh every few seconds, so
// the handler keeps the ended minutes of each queue it has read and asks
// Redis only for the minutes since: a refresh of the overview reads a
// minute or two of each queue instead of sixty (an hour of 100 queues is
// 90,000 hash fields, about 20 ms of Redis's time).

// settleAfter is how long after a minute's end its counts are taken as
// final: room for this process's clock to be ahead of Redis's.
const settleAfter = 2 * time.Minute

// maxCachedQueues bounds the queues whose minutes are kept (about 8 KB
// each); beyond it, one is dropped to make room.
const maxCachedQueues = 1000

// historyCache keeps the settled minutes of each queue's history.
type historyCache struct {
	mu     sync.Mutex
	queues map[string][]admin.HistoryMinute // consecutive minutes, oldest first
}

func newHistoryCache() *historyCache {
	return &historyCache{queues: make(map[string][]admin.HistoryMinute)}
}

// history returns what b.History(ctx, queue, from, to) returns, reading
// from b only the minutes that had not settled at the last read; now is
// this process's clock.
func (c *historyCache) history(ctx context.Context, b Backend, queue string, from, to, now time.Time) ([]admin.HistoryMinute, error) {
	from, to = from.Truncate(time.Minute), to.Truncate(time.Minute)
	want := int(to.Sub(from) / time.Minute)
	out := c.settled(queue, from, want)
	start := from.Add(time.Duration(len(out)) * time.Minute)
	if len(out) == want {
		return out, nil
	}
	fresh, err := b.History(ctx, queue, start, to)
	if err != nil {
		return nil, err
	}
	if len(fresh) != want-len(out) || (len(fresh) > 0 && !fresh[0].Start.Equal(start)) {
		return fresh, nil // not the minutes expected: keep nothing, and show what Redis said
	}
	out = append(out, fresh...)
	c.keep(queue, out, now.Add(-settleAfter))
	return out, nil
}

// settled returns a copy of the kept minutes of queue from from on, at
// most n.
func (c *historyCache) settled(queue string, from time.Time, n int) []admin.HistoryMinute {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.queues[queue]
	if len(kept) == 0 {
		return make([]admin.HistoryMinute, 0, n)
	}
	off := int(from.Sub(kept[0].Start) / time.Minute)
	if off < 0 || off >= len(kept) || !kept[off].Start.Equal(from) {
		return make([]admin.HistoryMinute, 0, n)
	}
	out := make([]admin.HistoryMinute, 0, n)
	return append(out, kept[off:min(len(kept), off+n)]...)
}

// keep stores the minutes of queue that ended before settled.
func (c *historyCache) keep(queue string, minutes []admin.HistoryMinute, settled time.Time) {
	n := 0
	for n < len(minutes) && !minutes[n].Start.Add(time.Minute).After(settled) {
		n++
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.queues[queue]; !ok && len(c.queues) >= maxCachedQueues {
		for q := range c.queues { // any one: the map's order is random
			delete(c.queues, q)
			break
		}
	}
	if n == 0 {
		delete(c.queues, queue)
		return
	}
	c.queues[queue] = append([]admin.HistoryMinute(nil), minutes[:n]...)
}

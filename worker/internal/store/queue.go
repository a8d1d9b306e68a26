package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// QueueRecord is what every partition of a queue must agree on: its
// layout, its id retention and its pause. Partition 0's settings hold the
// record (lua/queue_set.lua); every other partition holds a copy, taken
// only when newer (lua/queue_copy.lua), which its scripts read. The
// protocol that keeps them agreeing is worker/internal/queue's.
type QueueRecord struct {
	// Rev is the record's revision: each change takes max(Rev+1, the Redis
	// clock in µs), so no two records share one, even after Redis lost its
	// last writes. 0 when the record was never written.
	Rev         int64
	Layout      Layout
	IDRetention time.Duration // a caller's id stays refused this long after its job finished
	Paused      bool
}

// PausedMessage is the message a pause publishes on the queue's wake
// channel (lua/queue_set.lua, queue_copy.lua). Subscribe hands it to onWake
// as run-at 0, like any message that is not a time; a resume publishes the
// Redis clock in ms, a wake-up for jobs due now.
const PausedMessage = "paused"

// ReadQueue reads queue's record from partition 0 in one round trip (two
// plain commands: a read needs no script).
func (s *Store) ReadQueue(ctx context.Context, queue string) (QueueRecord, error) {
	k := s.Keys(queue)
	res := s.c.DoMulti(ctx,
		s.c.B().Hmget().Key(k.Settings).Field("rev", "v", fieldPartitions, "partitions_prev", "id_retention").Build(),
		s.c.B().Exists().Key(k.Paused).Build())
	f, err := res[0].ToArray()
	if err == nil && len(f) != 5 {
		err = fmt.Errorf("unexpected reply of %d values", len(f))
	}
	if err == nil {
		var paused int64
		if paused, err = res[1].AsInt64(); err == nil {
			return decodeRead(queue, f, paused == 1)
		}
	}
	return QueueRecord{}, fmt.Errorf("read the record of queue %s: %w", queue, err)
}

// decodeRead decodes the fields of a record as stored (rev, v,
// partitions, partitions_prev, id_retention; nil where absent).
func decodeRead(queue string, f []rueidis.RedisMessage, paused bool) (QueueRecord, error) {
	var n [5]int64
	for i, def := range []int64{0, 0, 1, 0, 0} {
		n[i] = def
		if i == 3 || f[i].IsNil() {
			continue // prev is a list; an absent field is its default
		}
		v, err := f[i].ToString()
		if err == nil {
			n[i], err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return QueueRecord{}, fmt.Errorf("read the record of queue %s: field %d: %w", queue, i+1, err)
		}
	}
	prev, _ := f[3].ToString()
	return QueueRecord{
		Rev:         n[0],
		Layout:      Layout{Version: n[1], Partitions: max(int(n[2]), 1), Prev: parsePrev(prev)},
		IDRetention: time.Duration(n[4]) * time.Millisecond,
		Paused:      paused,
	}, nil
}

// SetIDRetention sets queue's id retention in its record (0 = none: a
// caller's id is refused only while its job exists). It reports whether
// the record changed.
func (s *Store) SetIDRetention(ctx context.Context, queue string, d time.Duration) (QueueRecord, bool, error) {
	if d > MaxUniqueFor {
		return QueueRecord{}, false, fmt.Errorf("set id retention of %s: %s is over the limit of %s", queue, d, MaxUniqueFor)
	}
	rec, changed, err := s.queueSet(ctx, queue, "retention", strconv.FormatInt(max(d.Milliseconds(), 0), 10))
	return rec, changed > 0, err
}

// SetPaused pauses (on) or resumes queue in its record, partition 0's
// flag, and announces the change on its wake channel. It reports whether
// the record changed: a second call finds it so and publishes nothing.
func (s *Store) SetPaused(ctx context.Context, queue string, on bool) (QueueRecord, bool, error) {
	arg := "0"
	if on {
		arg = "1"
	}
	rec, changed, err := s.queueSet(ctx, queue, "pause", arg, s.Keys(queue).Wake)
	return rec, changed > 0, err
}

// PublishLayout writes l as queue's layout, with share as partition 0's
// share of a rate limit, if the record is still at revision rev (0: never
// written). It returns the record as it now is, and false when the
// revision had moved: nothing was written, read the record again.
func (s *Store) PublishLayout(ctx context.Context, queue string, rev int64, l Layout, share Share) (QueueRecord, bool, error) {
	want := ""
	if rev > 0 {
		want = strconv.FormatInt(rev, 10)
	}
	rec, changed, err := s.queueSet(ctx, queue, "layout", want, strconv.Itoa(max(l.Partitions, 1)), l.prevArg(), share.arg())
	return rec, changed > 0, err
}

// Pause pauses one queue or partition by its flag alone (SetPaused).
func (s *Store) Pause(ctx context.Context, queue string) (changed bool, err error) {
	_, changed, err = s.SetPaused(ctx, queue, true)
	return changed, err
}

// Resume ends the pause of one queue or partition (SetPaused).
func (s *Store) Resume(ctx context.Context, queue string) (changed bool, err error) {
	_, changed, err = s.SetPaused(ctx, queue, false)
	return changed, err
}

// queueSet runs queue_set.lua on queue's partition 0 and decodes the record
// it returns with its change flag (1 written, 0 already so, -1 refused).
func (s *Store) queueSet(ctx context.Context, queue, op string, args ...string) (QueueRecord, int64, error) {
	k := s.Keys(queue)
	vals, err := script.QueueSet.Exec(ctx, s.c, []string{k.Settings, k.Paused}, append([]string{op}, args...)).ToArray()
	if err != nil {
		return QueueRecord{}, 0, fmt.Errorf("%s of queue %s: %w", op, queue, markOOM(err))
	}
	return decodeQueueRecord(queue, vals)
}

// decodeQueueRecord decodes queue_set.lua's reply: its change flag, then
// the fields ReadQueue reads, and the pause flag.
func decodeQueueRecord(queue string, vals []rueidis.RedisMessage) (QueueRecord, int64, error) {
	if len(vals) != 7 {
		return QueueRecord{}, 0, fmt.Errorf("queue record of %s: unexpected reply of %d values", queue, len(vals))
	}
	changed, err := vals[0].AsInt64()
	var paused int64
	if err == nil {
		paused, err = vals[6].AsInt64()
	}
	if err != nil {
		return QueueRecord{}, 0, fmt.Errorf("queue record of %s: %w", queue, err)
	}
	rec, err := decodeRead(queue, vals[1:6], paused == 1)
	return rec, changed, err
}

// PartitionCopy is one partition i ≥ 1 a record is copied to: whether the
// record's layout serves it (or retired it) and its share of a rate limit.
type PartitionCopy struct {
	Partition string
	Serves    bool
	Share     Share
}

// CopyQueue gives each partition of copies the record rec, unless it holds
// that revision or a newer one (lua/queue_copy.lua), in one round trip per
// node. It returns the first error, naming its partition.
func (s *Store) CopyQueue(ctx context.Context, rec QueueRecord, copies []PartitionCopy) error {
	if len(copies) == 0 {
		return nil
	}
	paused := "0"
	if rec.Paused {
		paused = "1"
	}
	rev, v := strconv.FormatInt(rec.Rev, 10), strconv.FormatInt(rec.Layout.Version, 10)
	n, prev := strconv.Itoa(max(rec.Layout.Partitions, 1)), rec.Layout.prevArg()
	ret := strconv.FormatInt(rec.IDRetention.Milliseconds(), 10)
	calls := make([]script.Call, len(copies))
	for i, c := range copies {
		k := s.Keys(c.Partition)
		serves := "0"
		if c.Serves {
			serves = "1"
		}
		calls[i] = script.Call{Keys: []string{k.Settings, k.Paused}, Args: []string{rev, v, n, prev, ret, paused, c.Share.arg(), serves, k.Wake}}
	}
	for i, r := range script.QueueCopy.ExecMulti(ctx, s.c, calls...) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("copy the record of the queue to partition %s: %w", copies[i].Partition, markOOM(err))
		}
	}
	return nil
}

// Paused reports whether queue (one queue or partition) is paused.
func (s *Store) Paused(ctx context.Context, queue string) (bool, error) {
	n, err := s.c.Do(ctx, s.c.B().Exists().Key(s.Keys(queue).Paused).Build()).AsInt64()
	if err != nil {
		return false, fmt.Errorf("paused %s: %w", queue, err)
	}
	return n == 1, nil
}

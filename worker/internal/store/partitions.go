package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// fieldPartitions is the field of a queue's settings that holds its number
// of partitions while it is split (lua/queue_set.lua).
const fieldPartitions = "partitions"

// Layout is how a queue is split: what partition 0's record says
// (QueueRecord), and each partition's copy of it.
type Layout struct {
	// Version is the revision of the queue's record that published the
	// layout (QueueRecord.Rev); 0 for a queue never split.
	Version    int64
	Partitions int   // 1 when the queue was never split
	Prev       []int // earlier numbers whose retired partitions may hold jobs
}

// Names returns the partitions producers route to, partition 0 (the
// queue) first. The slice is shared: do not modify it.
func (l Layout) Names(queue string) []string { return PartitionNames(queue, l.Partitions) }

// All returns the partitions that may hold jobs: Names, then those of the
// earlier numbers still draining, each once.
func (l Layout) All(queue string) []string {
	names := l.Names(queue)
	if len(l.Prev) == 0 {
		return names
	}
	out := slices.Clone(names)
	for _, n := range l.Prev {
		for _, p := range PartitionNames(queue, n) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Home returns the partition a job of partition key key (its unique key,
// else its id) goes to.
func (l Layout) Home(queue, key string) string {
	if l.Partitions <= 1 {
		return queue
	}
	return l.Names(queue)[PartitionOf(key, l.Partitions)]
}

// Share is a partition's place among those a queue's rate limit is
// divided by: it is partition I of M (lua/claim.lua).
type Share struct{ I, M int }

func (s Share) arg() string { return strconv.Itoa(s.I) + ";" + strconv.Itoa(s.M) }

// ShareOf returns partition's share under l: its place in All. Every
// partition that may hold jobs has one, so together they never claim more
// than the limit.
func (l Layout) ShareOf(queue, partition string) Share {
	all := l.All(queue)
	return Share{I: max(slices.Index(all, partition), 0), M: len(all)}
}

// Same reports whether l and o split the queue alike (their versions may
// differ).
func (l Layout) Same(o Layout) bool {
	return max(l.Partitions, 1) == max(o.Partitions, 1) && slices.Equal(l.Prev, o.Prev)
}

func (l Layout) prevArg() string {
	s := make([]string, len(l.Prev))
	for i, n := range l.Prev {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func parsePrev(s string) []int {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if n, err := strconv.Atoi(f); err == nil && n >= 1 {
			out = append(out, n)
		}
	}
	return out
}

// ErrRetired is the enqueue's refusal of a retired partition: the queue's
// partitions changed and this one takes no new job.
var ErrRetired = errors.New("the partition is retired: the queue's partitions changed")

// StaleLayoutError is the enqueue's refusal of a caller that routed by an
// older layout than the partition holds. Nothing was written.
type StaleLayoutError struct {
	// Layout is the partition's layout; Known is false when the partition
	// holds none (the queue was forgotten, or Redis lost it): read partition
	// 0's.
	Layout Layout
	Known  bool
}

func (e *StaleLayoutError) Error() string {
	if !e.Known {
		return "the partition holds no layout: the queue's partitions changed"
	}
	return fmt.Sprintf("the queue's layout changed: %d partitions (version %d)", e.Layout.Partitions, e.Layout.Version)
}

// IsRefusal reports whether err is an enqueue's refusal of the caller's
// routing (ErrRetired or a *StaleLayoutError): nothing was written.
func IsRefusal(err error) bool {
	var stale *StaleLayoutError
	return errors.Is(err, ErrRetired) || errors.As(err, &stale)
}

// layoutRefusal turns enqueue.lua's refusals of a caller's routing into
// ErrRetired and *StaleLayoutError; other errors are returned as they are.
func layoutRefusal(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "courier: partition retired") {
		return ErrRetired
	}
	_, rest, ok := strings.Cut(msg, "courier: layout ")
	if !ok {
		return err
	}
	if strings.HasPrefix(rest, "unknown") {
		return &StaleLayoutError{}
	}
	f := strings.SplitN(rest, ";", 3)
	if len(f) != 3 {
		return err
	}
	v, err1 := strconv.ParseInt(f[0], 10, 64)
	n, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || n < 1 {
		return err
	}
	return &StaleLayoutError{Layout: Layout{Version: v, Partitions: n, Prev: parsePrev(strings.TrimSpace(f[2]))}, Known: true}
}

// Retire marks partitions (physical queue names) retired by the layout of
// version: their enqueues are refused from now on, until a copy of a
// layout at least that new serves them again (lua/queue_copy.lua). One
// round trip.
func (s *Store) Retire(ctx context.Context, partitions []string, version int64) error {
	v := strconv.FormatInt(version, 10)
	return s.setSettings(ctx, "retire partition", "retired", partitions, func(string) string { return v })
}

// CapShares prepares the rate shares of a layout about to be published:
// each partition of caps gets its share in it as a cap (the field
// share_next: until a copy of the record writes its share, its claims take
// the smaller of the two, lua/claim.lua), and each partition of added (one
// the old layout did not have) the cap "0;0": none until a copy writes
// its share, which then grows from none a window later (record.lua's
// share_set), whatever it held before an earlier layout dropped it. One
// round trip.
func (s *Store) CapShares(ctx context.Context, caps []PartitionCopy, added []string) error {
	shares := make(map[string]string, len(caps))
	partitions := make([]string, len(caps))
	for i, c := range caps {
		partitions[i], shares[c.Partition] = c.Partition, c.Share.arg()
		if slices.Contains(added, c.Partition) {
			shares[c.Partition] = "0;0"
		}
	}
	return s.setSettings(ctx, "cap the rate share of partition", "share_next", partitions, func(p string) string { return shares[p] })
}

// setSettings writes field of the settings hash of each partition, to
// value(partition), in one round trip; an error names what and the
// partition.
func (s *Store) setSettings(ctx context.Context, what, field string, partitions []string, value func(partition string) string) error {
	if len(partitions) == 0 {
		return nil
	}
	cmds := make([]rueidis.Completed, len(partitions))
	for i, p := range partitions {
		cmds[i] = s.c.B().Hset().Key(s.Keys(p).Settings).FieldValue().FieldValue(field, value(p)).Build()
	}
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("%s %s: %w", what, partitions[i], err)
		}
	}
	return nil
}

// HoldJobs reports, for each partition (physical queue name), whether it
// holds any job (its jobs hash exists), in one round trip.
func (s *Store) HoldJobs(ctx context.Context, partitions []string) ([]bool, error) {
	cmds := make([]rueidis.Completed, len(partitions))
	for i, p := range partitions {
		cmds[i] = s.c.B().Exists().Key(s.Keys(p).Jobs).Build()
	}
	out := make([]bool, len(partitions))
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err != nil {
			return nil, fmt.Errorf("look for jobs in partition %s: %w", partitions[i], err)
		}
		out[i] = n > 0
	}
	return out, nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// A queue split into partitions keeps its layout in partition 0's
// settings hash (the queue's own, Keys(queue).Settings):
//
//	partitions       the number of partitions producers route to
//	partitions_prev  earlier numbers, comma-separated, whose partitions
//	                 were retired while they still held jobs
//
// and each retired partition has "retired" = 1 in its own settings hash:
// an enqueue routed there (by a producer that read the layout before it
// changed) writes nothing and fails with ErrRetired, so the producer reads
// the layout again.
const (
	fieldPartitions     = "partitions"
	fieldPartitionsPrev = "partitions_prev"
	fieldRetired        = "retired"
)

// ErrRetired is the enqueue's refusal of a retired partition.
var ErrRetired = errors.New("the partition is retired: the queue's partitions changed")

// Layout is what partition 0's settings say of a queue's partitions.
type Layout struct {
	Partitions int   // 1 when the queue was never split
	Prev       []int // earlier numbers whose retired partitions may hold jobs
}

// Layout reads queue's layout in one call.
func (s *Store) Layout(ctx context.Context, queue string) (Layout, error) {
	k := s.Keys(queue)
	vals, err := s.c.Do(ctx, s.c.B().Hmget().Key(k.Settings).Field(fieldPartitions, fieldPartitionsPrev).Build()).ToArray()
	if err != nil {
		return Layout{}, fmt.Errorf("read the partitions of %s: %w", queue, err)
	}
	l := Layout{Partitions: 1}
	if len(vals) != 2 {
		return l, fmt.Errorf("read the partitions of %s: unexpected reply of %d values", queue, len(vals))
	}
	if v, err := vals[0].ToString(); err == nil {
		if n, err := strconv.Atoi(v); err == nil && n >= 1 {
			l.Partitions = n
		}
	}
	if v, err := vals[1].ToString(); err == nil {
		for f := range strings.SplitSeq(v, ",") {
			if n, err := strconv.Atoi(f); err == nil && n >= 1 {
				l.Prev = append(l.Prev, n)
			}
		}
	}
	return l, nil
}

// SetLayout writes queue's layout. A queue of one partition with no
// earlier layout to drain has the fields deleted: its settings are as
// before partitions existed.
func (s *Store) SetLayout(ctx context.Context, queue string, l Layout) error {
	k := s.Keys(queue)
	field := func(name string, set bool, value string) rueidis.Completed {
		if set {
			return s.c.B().Hset().Key(k.Settings).FieldValue().FieldValue(name, value).Build()
		}
		return s.c.B().Hdel().Key(k.Settings).Field(name).Build()
	}
	prev := make([]string, len(l.Prev))
	for i, n := range l.Prev {
		prev[i] = strconv.Itoa(n)
	}
	split := l.Partitions > 1 || len(l.Prev) > 0
	for _, r := range s.c.DoMulti(ctx,
		field(fieldPartitions, split, strconv.Itoa(max(l.Partitions, 1))),
		field(fieldPartitionsPrev, len(prev) > 0, strings.Join(prev, ","))) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("write the partitions of %s: %w", queue, err)
		}
	}
	return nil
}

// SetRetired marks partitions (physical queue names) retired or not, in
// one round trip.
func (s *Store) SetRetired(ctx context.Context, partitions []string, retired bool) error {
	if len(partitions) == 0 {
		return nil
	}
	cmds := make([]rueidis.Completed, len(partitions))
	for i, p := range partitions {
		k := s.Keys(p)
		if retired {
			cmds[i] = s.c.B().Hset().Key(k.Settings).FieldValue().FieldValue(fieldRetired, "1").Build()
		} else {
			cmds[i] = s.c.B().Hdel().Key(k.Settings).Field(fieldRetired).Build()
		}
	}
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			return fmt.Errorf("mark partition %s retired=%t: %w", partitions[i], retired, err)
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

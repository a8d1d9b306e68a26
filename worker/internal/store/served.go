package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/rueidis"
)

// ServedKey is the hash of what daemons have served under prefix: queue
// name → its Served record, encoded ("*", or the kinds joined by ","). A
// daemon writes its queues' at start and with each fleet report; only an
// operator's forget of the queue deletes one, so it outlives the daemons.
// One field per queue a daemon served: bounded like the set of queues.
func ServedKey(prefix string) string { return prefix + ":served" }

// Served is what the daemons that ever served a queue served of it.
type Served struct {
	// All: a daemon served the queue with one handler, which runs every
	// kind.
	All bool
	// Kinds are the kinds daemons served with a worker.Kinds, sorted; ""
	// stands for jobs without a kind.
	Kinds []string
}

// Serves reports whether a daemon served jobs of kind.
func (s Served) Serves(kind string) bool {
	_, found := slices.BinarySearch(s.Kinds, kind)
	return s.All || found
}

// encode is s's field value. Kinds hold no ',' (worker.ValidateKind).
func (s Served) encode() string {
	if s.All {
		return "*"
	}
	return strings.Join(s.Kinds, ",")
}

func decodeServed(v string) Served {
	if v == "*" {
		return Served{All: true}
	}
	return Served{Kinds: strings.Split(v, ",")}
}

// merge adds the kinds of a daemon (nil: one handler) to s, and reports
// whether s changed.
func (s Served) merge(kinds []string) (Served, bool) {
	if s.All {
		return s, false
	}
	if kinds == nil {
		return Served{All: true}, true
	}
	out := Served{Kinds: slices.Clone(s.Kinds)}
	for _, k := range kinds {
		if i, found := slices.BinarySearch(out.Kinds, k); !found {
			out.Kinds = slices.Insert(out.Kinds, i, k)
		}
	}
	return out, len(out.Kinds) != len(s.Kinds)
}

// RecordServed adds what a daemon serves of queue to its Served record:
// kinds, sorted, or nil for one handler. It reads the record (one HGET)
// and writes it only when it lacks one of them. Two daemons that add
// different kinds at once may lose one's; each report adds them again, so
// the record holds both within a report interval.
func (s *Store) RecordServed(ctx context.Context, queue string, kinds []string) error {
	key := ServedKey(s.prefix)
	v, err := s.c.Do(ctx, s.c.B().Hget().Key(key).Field(queue).Build()).ToString()
	var cur Served
	switch {
	case rueidis.IsRedisNil(err):
		cur = Served{}
	case err != nil:
		return fmt.Errorf("read what daemons served of %s: %w", queue, err)
	default:
		cur = decodeServed(v)
	}
	next, changed := cur.merge(kinds)
	if !changed {
		return nil
	}
	if err := markOOM(s.c.Do(ctx, s.c.B().Hset().Key(key).FieldValue().FieldValue(queue, next.encode()).Build()).Error()); err != nil {
		return fmt.Errorf("record what this daemon serves of %s: %w", queue, err)
	}
	return nil
}

// ServedOf reads the Served record of each of queues in one HMGET;
// found[i] is false when no daemon ever served queues[i].
func (s *Store) ServedOf(ctx context.Context, queues []string) (served []Served, found []bool, err error) {
	if len(queues) == 0 {
		return nil, nil, nil
	}
	vals, err := s.c.Do(ctx, s.c.B().Hmget().Key(ServedKey(s.prefix)).Field(queues...).Build()).ToArray()
	if err != nil {
		return nil, nil, fmt.Errorf("read what daemons served: %w", err)
	}
	served, found = make([]Served, len(queues)), make([]bool, len(queues))
	for i, v := range vals {
		text, err := v.ToString()
		if rueidis.IsRedisNil(err) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read what daemons served of %s: %w", queues[i], err)
		}
		served[i], found[i] = decodeServed(text), true
	}
	return served, found, nil
}

// ForgetServed deletes queue's Served record: the queue was forgotten.
func (s *Store) ForgetServed(ctx context.Context, queue string) error {
	if err := s.c.Do(ctx, s.c.B().Hdel().Key(ServedKey(s.prefix)).Field(queue).Build()).Error(); err != nil {
		return fmt.Errorf("forget what daemons served of %s: %w", queue, err)
	}
	return nil
}

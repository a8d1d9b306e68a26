package pool

import (
	"slices"
	"sync"
	"sync/atomic"
)

// slots are the handler slots of one queue, shared by its partitions
// (Queue.Group): each partition has its own claim loop, and they take
// slots from here, so the queue never runs more than Concurrency jobs in
// the process, however many partitions it has.
//
// Fairness: the partitions that have due jobs take turns, by stride. Each
// has a pass, moved on by the slots it claims over its weight (what its
// last claim said it holds: 1 without job keys, else the weights of its
// keys ready to start a job; store.Claimed.Weight). Only the partition of
// the lowest pass may claim; its claim takes the free slots, as a queue of
// one partition's would, and the next is told. So one partition's backlog
// never keeps the slots from another's, the partitions' jobs start in
// proportion to their weights (the keys of a queue share its starts by
// their weights whichever partition holds them), and each claim stays as
// large as a queue of one partition's: the Redis calls per job do not
// grow with the partitions.
type slots struct {
	limit   int
	used    atomic.Int64 // reserved by claims in flight, or running
	jobs    chan *run    // claimed jobs for the workers; never more than limit
	members []*queue

	mu    sync.Mutex
	turns []*queue // the partitions with jobs to claim, in the order they stood in line
}

func newSlots(limit int) *slots {
	return &slots{limit: limit, jobs: make(chan *run, limit)}
}

// free is how many slots no claim has reserved and no job holds.
func (s *slots) free() int { return s.limit - int(s.used.Load()) }

// first is the partition whose turn it is: the lowest pass in line, the
// earlier in line on a tie; nil when none stands in line. s.mu is held.
func (s *slots) first() *queue {
	var f *queue
	for _, q := range s.turns {
		if f == nil || q.pass < f.pass {
			f = q
		}
	}
	return f
}

// take reserves up to want free slots for q's claim and returns how many:
// 0 when none is free, or when it is another partition's turn (q is then
// told when its turn comes, on q.freed). The slots move q's pass on; the
// claim's outcome is given to claimed.
func (s *slots) take(q *queue, want int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) > 1 && s.first() != q {
		return 0
	}
	var n int
	for {
		used := s.used.Load()
		n = min(want, s.limit-int(used))
		if n <= 0 {
			return 0
		}
		if s.used.CompareAndSwap(used, used+int64(n)) {
			break
		}
	}
	q.pass += float64(n) / float64(q.weight)
	if f := s.first(); f != nil && f != q {
		signal(f.freed) // its turn has come
	}
	return n
}

// claimed ends q's claim of reserved slots (take), which got jobs: the
// slots it did not fill go back to its pass (release gives them back to
// the queue), and weight, when above 0, is q's weight from now on.
func (s *slots) claimed(q *queue, reserved, got, weight int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reserved > got {
		q.pass -= float64(reserved-got) / float64(q.weight)
	}
	if weight > 0 && weight != q.weight {
		// The lead q's pass holds over the lowest in line was run up at
		// the old weight: it is rescaled to the new one, so that a weight
		// learnt late (a partition's first claim counts at weight 1) or
		// one that swings (a heavy key parks and unparks) neither holds q
		// back nor sends it ahead.
		base := q.pass
		for _, o := range s.turns {
			base = min(base, o.pass)
		}
		q.pass = base + (q.pass-base)*float64(q.weight)/float64(weight)
		q.weight = weight
	}
	if f := s.first(); f != nil && f != q {
		signal(f.freed) // its turn has come (q's own loop runs on)
	}
}

// release gives n slots back and tells every partition's claim loop.
func (s *slots) release(n int) {
	if n <= 0 {
		return
	}
	s.used.Add(-int64(n))
	for _, m := range s.members {
		signal(m.freed)
	}
}

// want records whether q's claim loop has jobs to claim: it stands in
// line for its turns while it has.
func (q *queue) want(on bool) {
	if q.wanting == on {
		return
	}
	q.wanting = on
	s := q.slots
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		// One that stands in line again starts level with the first in
		// line: the turns it missed while it had nothing due are not owed.
		if f := s.first(); f != nil {
			q.pass = max(q.pass, f.pass)
		}
		s.turns = append(s.turns, q)
		return
	}
	first := s.first() == q
	s.turns = slices.DeleteFunc(s.turns, func(o *queue) bool { return o == q })
	if f := s.first(); first && f != nil {
		signal(f.freed)
	}
}

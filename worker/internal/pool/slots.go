package pool

import (
	"sync/atomic"
)

// slots are the handler slots of one queue, shared by its partitions
// (Queue.Group): each partition has its own claim loop, and they take
// slots from here, so the queue never runs more than Concurrency jobs in
// the process, however many partitions it has.
//
// Fairness: while several partitions have due jobs (they are wanting), a
// claim takes at most the limit divided among them (rounded up), so one
// partition's backlog never keeps the slots from another's; a partition
// alone takes every free slot.
type slots struct {
	limit   int
	used    atomic.Int64 // reserved by claims in flight, or running
	wanting atomic.Int32 // partitions whose claim loop has jobs to claim
	jobs    chan *run    // claimed jobs for the workers; never more than limit
	members []*queue
}

func newSlots(limit int) *slots {
	return &slots{limit: limit, jobs: make(chan *run, limit)}
}

// free is how many slots no claim has reserved and no job holds.
func (s *slots) free() int { return s.limit - int(s.used.Load()) }

// share is the most slots one claim may reserve now.
func (s *slots) share() int {
	w := int(s.wanting.Load())
	if w <= 1 {
		return s.limit
	}
	return (s.limit + w - 1) / w
}

// take reserves up to want free slots, no more than share, and returns how
// many it reserved (0 when none is free).
func (s *slots) take(want int) int {
	want = min(want, s.share())
	for {
		used := s.used.Load()
		n := min(want, s.limit-int(used))
		if n <= 0 {
			return 0
		}
		if s.used.CompareAndSwap(used, used+int64(n)) {
			return n
		}
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

// want records whether q's claim loop has jobs to claim.
func (q *queue) want(on bool) {
	if q.wanting == on {
		return
	}
	q.wanting = on
	if on {
		q.slots.wanting.Add(1)
	} else {
		q.slots.wanting.Add(-1)
	}
}

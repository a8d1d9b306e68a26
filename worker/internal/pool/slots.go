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
// Fairness: the partitions that have due jobs take turns. Only the first
// in line may claim; its claim takes the free slots, as a queue of one
// partition's would, and sends it to the back of the line, and the next
// is told. So one partition's backlog never keeps the slots from
// another's, and each claim stays as large as a queue of one partition's:
// the Redis calls per job do not grow with the partitions.
type slots struct {
	limit   int
	used    atomic.Int64 // reserved by claims in flight, or running
	jobs    chan *run    // claimed jobs for the workers; never more than limit
	members []*queue

	mu    sync.Mutex
	turns []*queue // the partitions with jobs to claim, in the order of their turns
}

func newSlots(limit int) *slots {
	return &slots{limit: limit, jobs: make(chan *run, limit)}
}

// free is how many slots no claim has reserved and no job holds.
func (s *slots) free() int { return s.limit - int(s.used.Load()) }

// take reserves up to want free slots for q's claim and returns how many:
// 0 when none is free, or when it is another partition's turn (q is then
// told when its turn comes, on q.freed).
func (s *slots) take(q *queue, want int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) > 1 && s.turns[0] != q {
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
	if len(s.turns) > 1 {
		// To the back of the line; the next is told its turn has come.
		s.turns = append(slices.DeleteFunc(s.turns, func(o *queue) bool { return o == q }), q)
		signal(s.turns[0].freed)
	}
	return n
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
		s.turns = append(s.turns, q)
		return
	}
	first := len(s.turns) > 0 && s.turns[0] == q
	s.turns = slices.DeleteFunc(s.turns, func(o *queue) bool { return o == q })
	if first && len(s.turns) > 0 {
		signal(s.turns[0].freed)
	}
}

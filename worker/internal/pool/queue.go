package pool

import (
	"context"
	"sync"
	"time"
)

// queue is the runtime state of one queue.
type queue struct {
	Queue
	slots   *slots // shared by the queue's partitions (Queue.Group)
	wanting bool   // the claim loop has jobs to claim (slots.wanting); its own
	// pass and weight are its place in the turns of the queue's
	// partitions (slots); guarded by slots.mu.
	pass    float64
	weight  int
	freed   chan struct{} // a worker finished a job, or a claim gave slots back
	wakeSig chan struct{} // a wake-up message or a (re)subscription arrived
	ackSig  chan struct{} // acks are pending
	// reportSig is the pool's: a handler reported progress (Run.Report),
	// and the report waits for flushLoop.
	reportSig chan struct{}

	// acks are the runs whose handler returned Ack and whose ack is not
	// stored yet; guarded by Pool.mu.
	acks []*run

	mu     sync.Mutex
	wakeAt int64 // earliest announced run-at (Redis ms) since the last look; -1 none
}

func newQueue(q Queue, s *slots) *queue {
	qu := &queue{
		Queue:   q,
		slots:   s,
		freed:   make(chan struct{}, 1),
		wakeSig: make(chan struct{}, 1),
		ackSig:  make(chan struct{}, 1),
		wakeAt:  -1,
		weight:  1,
	}
	s.members = append(s.members, qu)
	return qu
}

// label names the queue in metrics and logs: its Group, for a partition.
func (q *queue) label() string {
	if q.Group != "" {
		return q.Group
	}
	return q.Name
}

// gather is how many free slots a claim waits for while a backlog is
// waiting: half the slots.
func (q *queue) gather() int { return max(q.slots.limit/2, 1) }

// signal makes a non-blocking send on a one-slot channel.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// waitFreed waits until a worker frees a slot, or d passes; it reports false
// when ctx ended.
func (q *queue) waitFreed(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for q.slots.free() < q.gather() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-q.freed:
		}
	}
	return true
}

// errorBackoff is the wait after the n-th consecutive Redis failure:
// 100ms doubling to 5s.
func errorBackoff(n int) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < n && d < 5*time.Second; i++ {
		d *= 2
	}
	return min(d, 5*time.Second)
}

// sleepCtx waits for d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

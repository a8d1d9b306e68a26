package pool

import "testing"

// TestSlotsTurns: the partitions with jobs to claim take turns, each
// claim taking the free slots; a partition alone takes them whenever it
// likes.
func TestSlotsTurns(t *testing.T) {
	t.Parallel()
	s := newSlots(10)
	a := newQueue(Queue{Name: "q"}, s)
	b := newQueue(Queue{Name: "q#1"}, s)
	told := func(q *queue) bool {
		select {
		case <-q.freed:
			return true
		default:
			return false
		}
	}
	a.want(true)
	if got := s.take(a, 4); got != 4 {
		t.Fatalf("a partition alone took %d of the 4 it asked; want 4", got)
	}
	if got := s.take(a, 10); got != 6 {
		t.Fatalf("alone again, it took %d; want the 6 left", got)
	}
	s.release(10)
	told(a)
	told(b)
	b.want(true) // b stands in line behind a
	if got := s.take(b, 5); got != 0 {
		t.Fatalf("b took %d before its turn", got)
	}
	if got := s.take(a, 5); got != 5 {
		t.Fatalf("a, first in line, took %d; want 5", got)
	}
	if !told(b) {
		t.Error("b was not told its turn had come")
	}
	if got := s.take(a, 5); got != 0 {
		t.Fatalf("a took %d again before b's turn", got)
	}
	if got := s.take(b, 10); got != 5 {
		t.Fatalf("b took %d; want the 5 free", got)
	}
	if got := s.take(a, 1); got != 0 || s.free() != 0 {
		t.Fatalf("took %d with no slot free (free %d)", got, s.free())
	}
	// A release tells every partition's loop.
	s.release(3)
	if !told(a) || !told(b) {
		t.Error("a release did not tell every partition")
	}
	// b leaves the line: a is alone again.
	b.want(false)
	b.want(false) // idempotent
	if got := s.take(a, 10); got != 3 {
		t.Errorf("a took %d; want the 3 free", got)
	}
}

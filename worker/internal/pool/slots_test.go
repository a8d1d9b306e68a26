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

// TestSlotsTurnsByWeight: partitions take the slots in proportion to the
// weights their claims report, and one that stands in line again after
// an idle spell is not owed the turns it missed.
func TestSlotsTurnsByWeight(t *testing.T) {
	t.Parallel()
	s := newSlots(2)
	a := newQueue(Queue{Name: "q"}, s)
	b := newQueue(Queue{Name: "q#1"}, s)
	c := newQueue(Queue{Name: "q#2"}, s)
	a.want(true)
	b.want(true)
	// Their first claims report a weight of 3 for a (three keys ready)
	// and 1 for b.
	for _, q := range []*queue{a, b} {
		n := s.take(q, 1)
		w := 1
		if q == a {
			w = 3
		}
		s.claimed(q, n, n, w)
		s.release(n)
	}
	// Then the slots free one at a time, and whoever's turn it is claims.
	got := map[*queue]int{}
	claim := func() {
		for _, q := range []*queue{a, b, c} {
			if n := s.take(q, 1); n > 0 {
				got[q]++
				s.claimed(q, n, n, q.weight)
				s.release(n)
				return
			}
		}
		t.Fatal("no partition could claim a free slot")
	}
	for range 400 {
		claim()
	}
	if got[a] != 300 || got[b] != 100 {
		t.Fatalf("a (weight 3) took %d, b (weight 1) %d of 400; want 300 and 100", got[a], got[b])
	}
	// c stands in line after 400 starts: it starts level with the others,
	// not 100 turns ahead.
	c.want(true)
	got = map[*queue]int{}
	for range 50 {
		claim()
	}
	if got[c] > 15 || got[c] < 8 {
		t.Fatalf("c, new in line at weight 1, took %d of the next 50 starts (a %d, b %d); want about 10", got[c], got[a], got[b])
	}
	// A claim that takes fewer jobs than it reserved is charged only for
	// what it took.
	b.want(false)
	c.want(false)
	before := a.pass
	n := s.take(a, 2)
	s.claimed(a, n, 0, 0)
	s.release(n)
	if a.pass != before {
		t.Fatalf("a's pass moved from %v to %v for a claim that took nothing", before, a.pass)
	}
}

// TestSlotsWeightLearntLate: a partition's first claims count at weight 1;
// the weight its claim then reports rescales the lead it ran up, so that
// partitions of equal weight share equally from then on.
func TestSlotsWeightLearntLate(t *testing.T) {
	t.Parallel()
	s := newSlots(10)
	a := newQueue(Queue{Name: "q"}, s)
	b := newQueue(Queue{Name: "q#1"}, s)
	a.want(true)
	b.want(true)
	// a claims first, a full claim at weight 1, and learns it weighs 1000.
	n := s.take(a, 10)
	s.claimed(a, n, n, 1000)
	s.release(n)
	got := map[*queue]int{}
	for range 200 {
		for _, q := range []*queue{b, a} {
			if n := s.take(q, 1); n > 0 {
				got[q]++
				s.claimed(q, n, n, 1000)
				s.release(n)
				break
			}
		}
	}
	if got[a] < 95 || got[b] > 105 {
		t.Fatalf("of 200 starts after its first claim a took %d, b %d; want about 100 each (a's lead at weight 1 held it back)", got[a], got[b])
	}
}

package pool

import "testing"

func TestSlotsShareAmongWantingPartitions(t *testing.T) {
	t.Parallel()
	s := newSlots(10)
	a := newQueue(Queue{Name: "q"}, s)
	b := newQueue(Queue{Name: "q#1"}, s)
	a.want(true)
	if got := s.take(10); got != 10 {
		t.Fatalf("one partition wanting took %d of 10 free slots; want all", got)
	}
	s.release(10)
	b.want(true)
	if got := s.take(10); got != 5 {
		t.Fatalf("with two partitions wanting, a claim took %d slots; want its share, 5", got)
	}
	if got := s.take(10); got != 5 {
		t.Fatalf("the second claim took %d; want the other 5", got)
	}
	if got := s.take(1); got != 0 || s.free() != 0 {
		t.Fatalf("took %d with no slot free (free %d)", got, s.free())
	}
	// A release tells every partition's loop.
	s.release(3)
	for _, q := range []*queue{a, b} {
		select {
		case <-q.freed:
		default:
			t.Errorf("partition %s was not told of the freed slots", q.Name)
		}
	}
	a.want(false)
	a.want(false) // idempotent
	if w := s.wanting.Load(); w != 1 {
		t.Errorf("wanting = %d; want 1", w)
	}
	if got := s.take(10); got != 3 {
		t.Errorf("took %d; want the 3 free", got)
	}
}

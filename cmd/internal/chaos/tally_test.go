package chaos

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// t0 is the start of every ledger in these tests; at(s) is s seconds later.
var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// deliver records a delivery of id that arrived at from and was answered
// at to, by daemon, attempt n.
func deliver(l *Ledger, id string, from, to float64, daemon string, n int) {
	l.Deliver(id, Delivery{Arrived: at(from), Answered: at(to), Attempt: n, Daemon: daemon})
}

func TestTallyCountsEachAcknowledgedJobOnce(t *testing.T) {
	t.Parallel()
	l := NewLedger(t0)
	l.Acked(at(1), false, "a", "b", "c", "d", "e", "f")
	l.Acked(at(2), false, "a") // acknowledged again: still one job
	deliver(l, "a", 1.1, 1.2, "d0#1", 1)
	deliver(l, "b", 1.1, 1.2, "d0#1", 1)
	deliver(l, "b", 5, 5.1, "d1#1", 2) // a duplicate
	deliver(l, "b", 6, 6.1, "d2#1", 3) // another
	deliver(l, "c", 1.1, 1.2, "d0#1", 1)
	deliver(l, "x", 1.1, 1.2, "d0#1", 1) // never acknowledged
	// d: dead, never delivered; e: dead after a delivery; f: gone.
	dead := map[string]bool{"d": true, "e": true}
	deliver(l, "e", 1.1, 1.2, "d0#1", 1)
	tl := l.Tally(dead, map[string]string{"f": "absent"})

	got := [...]int{tl.Jobs, tl.Delivered, tl.Duplicates, tl.Dead, tl.Lost, tl.DeliveredDead, tl.Unacked}
	want := [...]int{6, 4, 2, 1, 1, 1, 1}
	if got != want {
		t.Fatalf("jobs, delivered, dup, dead, lost, delivered-and-dead, unacknowledged = %v, want %v", got, want)
	}
	if tl.Jobs != tl.Delivered+tl.Dead+tl.Lost {
		t.Errorf("jobs %d != delivered %d + dead %d + lost %d", tl.Jobs, tl.Delivered, tl.Dead, tl.Lost)
	}
	if len(tl.LostSamples) != 1 || tl.LostSamples[0] != (LostSample{ID: "f", State: "absent"}) {
		t.Errorf("lost samples = %+v, want f absent", tl.LostSamples)
	}
	if tl.LostByState["absent"] != 1 {
		t.Errorf("lost by state = %v, want absent: 1", tl.LostByState)
	}
}

func TestTallyLostJobsStillInRedisAreNamedByState(t *testing.T) {
	t.Parallel()
	l := NewLedger(t0)
	l.Acked(at(0), false, "j7", "j1", "j3", "j2", "j6", "j5", "j4")
	tl := l.Tally(nil, map[string]string{"j1": "active", "j2": "active", "j3": "absent", "j4": "ready"})
	if tl.Lost != 7 {
		t.Fatalf("lost = %d, want 7", tl.Lost)
	}
	want := map[string]int{"active": 2, "absent": 1, "ready": 1, "unknown": 3}
	for st, n := range want {
		if tl.LostByState[st] != n {
			t.Errorf("lost in state %s = %d, want %d (all: %v)", st, tl.LostByState[st], n, tl.LostByState)
		}
	}
	var sampled []string
	for _, s := range tl.LostSamples {
		sampled = append(sampled, s.ID)
	}
	if !slices.Equal(sampled, []string{"j1", "j2", "j3", "j4", "j5"}) {
		t.Errorf("lost samples = %v, want the first %d ids in order", sampled, sampleMax)
	}
}

func TestTallyNamesTheFaultBeforeEachDuplicate(t *testing.T) {
	t.Parallel()
	l := NewLedger(t0)
	l.Acked(at(0), false, "early", "late", "calm")
	l.AddFault(Fault{Kind: "kill -9", Target: "daemon d1#1", Start: at(2), End: at(2.5)})
	l.AddFault(Fault{Kind: "kill -9", Target: "daemon d2#1", Start: at(6), End: at(6.5)})
	deliver(l, "early", 1, 1.1, "d1#1", 1)
	deliver(l, "early", 5, 5.1, "d0#1", 2) // after the first fault
	deliver(l, "late", 5.5, 5.6, "d2#1", 1)
	deliver(l, "late", 9, 9.1, "d0#1", 2) // after the second
	deliver(l, "calm", 0.5, 0.6, "d0#1", 1)
	deliver(l, "calm", 1, 1.1, "d0#1", 1) // before any fault
	tl := l.Tally(nil, nil)
	if tl.Duplicates != 3 {
		t.Fatalf("duplicates = %d, want 3", tl.Duplicates)
	}
	got := map[string]string{}
	for _, d := range tl.DupSamples {
		got[d.ID] = d.After
	}
	want := map[string]string{
		"calm":  "no fault before it",
		"early": "kill -9 daemon d1#1 at +2s",
		"late":  "kill -9 daemon d2#1 at +6s",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("duplicate %s after %q, want %q", id, got[id], w)
		}
	}
	if tl.DupSamples[0].ID != "calm" || tl.DupSamples[2].ID != "late" {
		t.Errorf("samples not in order of their second delivery: %+v", tl.DupSamples)
	}
	if d := tl.DupSamples[1].Deliveries; !slices.Equal(d, []string{"attempt 1 by d1#1 at +1s", "attempt 2 by d0#1 at +5s"}) {
		t.Errorf("deliveries of early = %q", d)
	}
}

func TestTallyCountsOverlaps(t *testing.T) {
	t.Parallel()
	l := NewLedger(t0)
	l.Acked(at(0), false, "a")
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		l.Overlapped(id)
	}
	tl := l.Tally(nil, nil)
	if tl.Overlaps != 7 || !slices.Equal(tl.OverlapIDs, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("overlaps %d, samples %q; want 7 and the first %d", tl.Overlaps, tl.OverlapIDs, sampleMax)
	}
}

func TestTallyRecoverIsTheLastHeldUpJobAfterEachEpisode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		jobs    [][3]float64 // acked, first arrival, answered
		faults  [][2]float64 // start, end
		recover []time.Duration
	}{{
		name:    "nothing late",
		jobs:    [][3]float64{{1, 1.1, 1.2}, {3, 3.5, 3.6}, {5, 5.9, 6}},
		faults:  [][2]float64{{2, 3}},
		recover: []time.Duration{0},
	}, {
		name: "a job held through the fault arrives 4 s after its end",
		jobs: [][3]float64{{1, 7, 7.1}, {1, 1.1, 1.2}},
		// the job acked at 1 arrives at 7: late, held up by the fault
		faults:  [][2]float64{{2, 3}},
		recover: []time.Duration{4 * time.Second},
	}, {
		name: "a late job arriving during the fault costs nothing",
		jobs: [][3]float64{{1, 2.8, 3}},
		// arrived before the fault ended
		faults:  [][2]float64{{2, 3}},
		recover: []time.Duration{0},
	}, {
		name: "a late job acked after the next episode began belongs to that one",
		jobs: [][3]float64{{1, 4, 4.1}, {6.5, 9, 9.1}},
		// episode 1 held up the first (4-3 = 1 s); the second was acked
		// after episode 2 began: 9-7 = 2 s, and not charged to episode 1
		faults:  [][2]float64{{2, 3}, {6, 7}},
		recover: []time.Duration{time.Second, 2 * time.Second},
	}, {
		name: "a job delivered before the fault and late for another reason is not counted",
		jobs: [][3]float64{{0, 1.5, 1.6}},
		// late (1.5 s) but arrived before the fault began
		faults:  [][2]float64{{2, 3}},
		recover: []time.Duration{0},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := NewLedger(t0)
			for i, j := range c.jobs {
				id := string(rune('a' + i))
				l.Acked(at(j[0]), false, id)
				deliver(l, id, j[1], j[2], "d0#1", 1)
			}
			for _, f := range c.faults {
				l.AddFault(Fault{Kind: "k", Target: "t", Start: at(f[0]), End: at(f[1])})
			}
			tl := l.Tally(nil, nil)
			var got []time.Duration
			for _, f := range tl.Faults {
				got = append(got, f.Recover.Round(time.Millisecond))
			}
			if !slices.Equal(got, c.recover) {
				t.Errorf("recover per episode = %v, want %v", got, c.recover)
			}
			if w := slices.Max(c.recover); tl.Recover.Round(time.Millisecond) != w {
				t.Errorf("recover = %v, want the worst episode's %v", tl.Recover, w)
			}
		})
	}
}

func TestTallyKeepsTheBookkeepingOfTheProducer(t *testing.T) {
	t.Parallel()
	l := NewLedger(t0)
	l.Acked(at(1), true, "a", "b")
	l.Acked(at(1), true, "a") // already counted
	l.Refused(3)
	l.Abandoned("z")
	l.Aborted()
	l.Note("a note")
	l.Break("d1#2 exited with status 1 after SIGTERM")
	l.AddFault(Fault{Kind: "instant", Target: "t", Start: at(2)})
	tl := l.Tally(nil, nil)
	if tl.Resolved != 2 || tl.Refused != 3 || tl.Abandoned != 1 || tl.Aborted != 1 {
		t.Errorf("resolved %d refused %d abandoned %d aborted %d, want 2 3 1 1", tl.Resolved, tl.Refused, tl.Abandoned, tl.Aborted)
	}
	if !slices.Equal(tl.Notes, []string{"a note"}) || len(tl.Anomalies) != 1 {
		t.Errorf("notes %q anomalies %q", tl.Notes, tl.Anomalies)
	}
	if f := tl.Faults[0]; f.End != f.Start {
		t.Errorf("an instant fault ends when it starts: %+v", f)
	}
}

func TestTallySplitsConfirmedEnqueues(t *testing.T) {
	t.Parallel()
	l := NewLedger(t0)
	l.SetQueue(1, true)
	l.Acked(at(1), false, "c1", "c2", "c3")
	l.Unconfirmed("u1", "u2", "c1") // c1 was acknowledged confirmed already
	l.Acked(at(1), false, "u1", "u2")
	l.ProducerError()
	l.ProducerError()
	deliver(l, "c1", 1.1, 1.2, "d0#1", 1)
	deliver(l, "u1", 1.1, 1.2, "d0#1", 1)
	tl := l.Tally(nil, nil)
	got := [...]int{tl.Jobs, tl.Confirmed, tl.Unconfirmed, tl.Lost, tl.LostConfirmed, tl.LostUnconfirmed, tl.ProducerErrors}
	if want := [...]int{5, 3, 2, 3, 2, 1, 2}; got != want {
		t.Errorf("jobs, confirmed, unconfirmed, lost, lost confirmed, lost unconfirmed, errors = %v, want %v", got, want)
	}

	// Without durability nothing is confirmed or not.
	l = NewLedger(t0)
	l.Unconfirmed("u1")
	l.Acked(at(1), true, "u1", "c1")
	if tl := l.Tally(nil, nil); tl.Confirmed+tl.Unconfirmed+tl.LostConfirmed+tl.LostUnconfirmed != 0 || tl.Lost != 2 {
		t.Errorf("no durability: %+v", tl)
	}
}

// idsIn returns k ids, "p<n>-<i>", whose partition of n is p.
func idsIn(p, n, k int) []string {
	var ids []string
	for i := 0; len(ids) < k; i++ {
		if id := fmt.Sprintf("p%d-%d", n, i); rediskeys.PartitionOf(id, n) == p {
			ids = append(ids, id)
		}
	}
	return ids
}

func TestTallyResumeIsTheFirstDeliveryOfACutPartitionOnceServedAgain(t *testing.T) {
	t.Parallel()
	l := NewLedger(t0)
	l.SetQueue(6, true)
	cut, other := idsIn(0, 6, 4), idsIn(2, 6, 2)
	l.Acked(at(0), false, append(slices.Clone(cut), other...)...)
	// The master of partitions 0 and 5 is killed at 2; its replica serves
	// them from 5.
	l.AddFault(Fault{Kind: "kill -9 master", Target: "m1", Start: at(2), Partitions: []int{0, 5}, Back: at(5)})
	deliver(l, cut[0], 2.01, 2.2, "d0#1", 1)  // claimed before the kill
	deliver(l, other[0], 5.1, 5.2, "d0#1", 1) // another partition
	deliver(l, cut[2], 6.5, 6.6, "d0#1", 1)
	deliver(l, cut[1], 5.8, 5.9, "d1#1", 1) // the first once served again
	// A second episode whose partitions never came back to the receiver.
	l.AddFault(Fault{Kind: "kill -9 master", Target: "m2", Start: at(8), Partitions: []int{3}, Back: at(11)})
	tl := l.Tally(nil, nil)
	if len(tl.Faults) != 2 {
		t.Fatalf("faults %+v", tl.Faults)
	}
	f := tl.Faults[0]
	if f.Resume.Round(time.Millisecond) != 3800*time.Millisecond || f.Back != 5*time.Second || !slices.Equal(f.Partitions, []int{0, 5}) {
		t.Errorf("episode 1: resume %v back %v partitions %v; want 3.8s, 5s, [0 5]", f.Resume, f.Back, f.Partitions)
	}
	if tl.Faults[1].Resume != 0 {
		t.Errorf("episode 2 resumed: %+v", tl.Faults[1])
	}
	if tl.Resume.Round(time.Millisecond) != 3800*time.Millisecond {
		t.Errorf("resume = %v, want the worst measured, 3.8s", tl.Resume)
	}
}

package chaos

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// sampleMax is how many duplicate or lost ids a report lists.
const sampleMax = 5

// Tally is a scenario's ledger once the drain is over.
//
// Jobs counts acknowledged enqueues. Delivered counts those delivered at
// least once; Dead those in the dead set and never delivered; Lost the
// rest: Jobs = Delivered + Dead + Lost. Duplicates counts deliveries beyond
// the first of any id.
type Tally struct {
	Jobs       int `json:"jobs"`
	Delivered  int `json:"delivered"`
	Duplicates int `json:"duplicates"`
	Dead       int `json:"dead"`
	Lost       int `json:"lost"`

	// Recover is the worst over the fault episodes of the time from an
	// episode's end until the last job it held up reached the receiver: a
	// job is held up when it arrived more than lateLag after its enqueue
	// was acknowledged. Zero when no job was late (or the late ones had
	// arrived by the episode's end); lost jobs never arrive and are not
	// counted here. Each episode's figure is in Faults.
	Recover time.Duration `json:"recover_ns"`

	// Confirmed and Unconfirmed split Jobs when the producer asks replicas
	// to confirm its enqueues (worker.Durability): Unconfirmed jobs were
	// stored on the master but not confirmed (ErrNotReplicated), or found
	// stored after a failed call. LostConfirmed and LostUnconfirmed split
	// Lost the same way. All four are zero without durability.
	Confirmed       int `json:"confirmed,omitempty"`
	Unconfirmed     int `json:"unconfirmed,omitempty"`
	LostConfirmed   int `json:"lost_confirmed,omitempty"`
	LostUnconfirmed int `json:"lost_unconfirmed,omitempty"`
	// ProducerErrors counts the errors the producer's client calls
	// returned (see Ledger.ProducerError).
	ProducerErrors int `json:"producer_errors"`
	// Resume is the worst, over the episodes that cut partitions off, of
	// the time from the episode's start (a master's kill) until the first
	// delivery of a job of those partitions once the suite saw them served
	// again (FaultReport.Resume). Zero when no episode cut partitions off;
	// an episode after which they never resumed is in Faults (Resume 0).
	Resume time.Duration `json:"resume_ns,omitempty"`
	// Ready is the worst, over the episodes that restarted daemons while
	// Redis could not serve them, of a daemon's time from Redis answering
	// again until it was ready (FaultReport.Ready).
	Ready time.Duration `json:"ready_ns,omitempty"`
	// CapViolations counts the requests that found their job's key at its
	// cap already (a scenario with job keys); LeakedSlots the slots the
	// keys held once the queue was idle (the world reads them).
	CapViolations int `json:"cap_violations,omitempty"`
	KeyPeak       int `json:"key_peak,omitempty"` // the most requests of one key in flight
	LeakedSlots   int `json:"leaked_slots,omitempty"`
	// Spread is each master's share of the jobs of a partitioned queue
	// (the world measures it, not the ledger).
	Spread []Share `json:"spread,omitempty"`

	Faults      []FaultReport  `json:"faults"`
	DupSamples  []DupSample    `json:"duplicate_samples,omitempty"`
	LostSamples []LostSample   `json:"lost_samples,omitempty"`
	LostByState map[string]int `json:"lost_by_state,omitempty"` // where the lost jobs are: absent, or a state in Redis

	// Overlaps counts requests that reached the receiver while another
	// request for the same job was still open: two workers ran the job at
	// once (whether or not either got its answer).
	Overlaps      int      `json:"overlaps,omitempty"`
	OverlapIDs    []string `json:"overlap_samples,omitempty"`
	DeliveredDead int      `json:"delivered_and_dead,omitempty"` // delivered, and then dead too (counted as delivered)
	Unacked       int      `json:"unacknowledged_delivered,omitempty"`
	Resolved      int      `json:"enqueues_resolved,omitempty"`  // enqueue calls that failed, found stored afterwards or sent again
	Refused       int      `json:"enqueues_refused,omitempty"`   // enqueue calls refused outright (OOM)
	Abandoned     int      `json:"enqueues_abandoned,omitempty"` // outcome never learned: not counted as jobs
	Aborted       int      `json:"requests_aborted,omitempty"`   // requests the sender hung up on
	Notes         []string `json:"notes,omitempty"`
	Anomalies     []string `json:"anomalies,omitempty"` // promises broken on the way (Ledger.Break)
}

// FaultReport is a fault episode as reported: offsets from the scenario's
// start.
type FaultReport struct {
	Kind    string        `json:"kind"`
	Target  string        `json:"target"`
	Start   time.Duration `json:"start_ns"`
	End     time.Duration `json:"end_ns"`
	Recover time.Duration `json:"recover_ns"`
	Note    string        `json:"note,omitempty"`
	// Partitions the episode cut off; Back when they were served again,
	// and Resume from Start until the first delivery of one of their jobs
	// that arrived at Back or later (0: none did).
	Partitions []int         `json:"partitions,omitempty"`
	Back       time.Duration `json:"back_ns,omitempty"`
	Resume     time.Duration `json:"resume_ns,omitempty"`
	// Ready: each daemon the episode restarted, its time from Back until
	// it was ready (see Fault.Ready).
	Ready []time.Duration `json:"ready_ns,omitempty"`
}

// DupSample is an id delivered more than once.
type DupSample struct {
	ID         string   `json:"id"`
	Deliveries []string `json:"deliveries"` // "attempt 1 by d2 at +3.1s" each
	After      string   `json:"after"`      // the last fault episode begun before the second delivery
}

// LostSample is an acknowledged job never delivered.
type LostSample struct {
	ID    string `json:"id"`
	State string `json:"state"` // "absent" or its state in Redis after the drain
}

// Tally computes the figures. dead holds the ids in the queue's dead set;
// states the state in Redis of each id still missing ("absent" when Redis
// has no such job); missing entries count as "unknown".
func (l *Ledger) Tally(dead map[string]bool, states map[string]string) Tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := Tally{
		Jobs: len(l.acked), Resolved: l.resolved, Refused: l.refused,
		Abandoned: len(l.abandoned), Aborted: l.aborted, Notes: slices.Clone(l.notes),
		Anomalies: slices.Clone(l.broken), Overlaps: l.overlaps, OverlapIDs: slices.Clone(l.overlapIDs),
		ProducerErrors: l.errs,
	}
	var lost []string
	for id := range l.acked {
		if l.durable && l.unsure[id] {
			t.Unconfirmed++
		} else if l.durable {
			t.Confirmed++
		}
		switch {
		case len(l.deliveries[id]) > 0:
			t.Delivered++
			if dead[id] {
				t.DeliveredDead++
			}
		case dead[id]:
			t.Dead++
		default:
			lost = append(lost, id)
			if l.durable && l.unsure[id] {
				t.LostUnconfirmed++
			} else if l.durable {
				t.LostConfirmed++
			}
		}
	}
	t.Lost = len(lost)
	slices.Sort(lost)
	for _, id := range lost {
		st := states[id]
		if st == "" {
			st = "unknown"
		}
		if t.LostByState == nil {
			t.LostByState = map[string]int{}
		}
		t.LostByState[st]++
		if len(t.LostSamples) < sampleMax {
			t.LostSamples = append(t.LostSamples, LostSample{ID: id, State: st})
		}
	}
	for id, ds := range l.deliveries {
		t.Duplicates += len(ds) - 1
		if _, ok := l.acked[id]; !ok {
			t.Unacked++
		}
	}
	t.DupSamples = l.dupSamples()
	t.Faults = l.faultReports()
	for _, f := range t.Faults {
		t.Recover = max(t.Recover, f.Recover)
		t.Resume = max(t.Resume, f.Resume)
		for _, r := range f.Ready {
			t.Ready = max(t.Ready, r)
		}
	}
	return t
}

// dupSamples lists the first ids, by time of their second delivery, that
// were delivered more than once.
func (l *Ledger) dupSamples() []DupSample {
	type dup struct {
		id     string
		second time.Time
	}
	var dups []dup
	for id, ds := range l.deliveries {
		if len(ds) > 1 {
			sorted := sortedDeliveries(ds)
			dups = append(dups, dup{id, sorted[1].Arrived})
		}
	}
	slices.SortFunc(dups, func(a, b dup) int { return a.second.Compare(b.second) })
	var out []DupSample
	for _, d := range dups[:min(len(dups), sampleMax)] {
		s := DupSample{ID: d.id, After: "no fault before it"}
		for _, dl := range sortedDeliveries(l.deliveries[d.id]) {
			s.Deliveries = append(s.Deliveries, fmt.Sprintf("attempt %d by %s at +%s",
				dl.Attempt, dl.Daemon, roundDur(l.Since(dl.Arrived))))
		}
		if f, ok := l.faultBefore(d.second); ok {
			s.After = fmt.Sprintf("%s %s at +%s", f.Kind, f.Target, roundDur(l.Since(f.Start)))
		}
		out = append(out, s)
	}
	return out
}

// faultBefore returns the last fault episode begun at or before t.
func (l *Ledger) faultBefore(t time.Time) (Fault, bool) {
	var best Fault
	found := false
	for _, f := range l.faults {
		if !f.Start.After(t) && (!found || f.Start.After(best.Start)) {
			best, found = f, true
		}
	}
	return best, found
}

// lateLag is how long after its enqueue was acknowledged a job may reach
// the receiver without counting as late: with the suite's load, on time
// jobs arrive within milliseconds (or a few hundred when every slot is busy).
const lateLag = time.Second

// faultReports measures each episode's time to recover: from its end
// until the last late job it held up reached the receiver. The jobs an
// episode held up are the late ones that first arrived after it began and
// were acknowledged before the next episode began.
func (l *Ledger) faultReports() []FaultReport {
	type job struct{ acked, first time.Time }
	var late []job
	for id, at := range l.acked {
		if ds := l.deliveries[id]; len(ds) > 0 {
			if first := sortedDeliveries(ds)[0].Arrived; first.Sub(at) > lateLag {
				late = append(late, job{at, first})
			}
		}
	}
	faults := slices.Clone(l.faults)
	slices.SortStableFunc(faults, func(a, b Fault) int { return a.Start.Compare(b.Start) })
	out := make([]FaultReport, 0, len(faults))
	for i, f := range faults {
		var rec time.Duration
		for _, j := range late {
			if j.first.Before(f.Start) || (i+1 < len(faults) && !j.acked.Before(faults[i+1].Start)) {
				continue
			}
			rec = max(rec, j.first.Sub(f.End))
		}
		fr := FaultReport{
			Kind: f.Kind, Target: f.Target, Note: f.Note,
			Start: l.Since(f.Start), End: l.Since(f.End), Recover: rec,
			Partitions: slices.Clone(f.Partitions), Ready: slices.Clone(f.Ready),
		}
		if !f.Back.IsZero() {
			fr.Back = l.Since(f.Back)
		}
		if len(f.Partitions) > 0 && !f.Back.IsZero() {
			if first, ok := l.firstDeliveryOf(f.Partitions, f.Back); ok {
				fr.Resume = first.Sub(f.Start)
			}
		}
		out = append(out, fr)
	}
	return out
}

// firstDeliveryOf returns the arrival of the first delivery, at from or
// later, of a job of one of partitions. A job a worker claimed before a
// master's kill reaches the receiver within milliseconds of its claim,
// well before a replica is promoted (from): every delivery this finds was
// claimed once the partitions were served again. The promotion as the
// suite saw it trails the real one by up to a poll (50 ms), so the time
// found may be that much late, never early.
func (l *Ledger) firstDeliveryOf(partitions []int, from time.Time) (time.Time, bool) {
	var first time.Time
	for id, ds := range l.deliveries {
		if !slices.Contains(partitions, rediskeys.PartitionOf(id, max(l.partitions, 1))) {
			continue
		}
		for _, d := range ds {
			if !d.Arrived.Before(from) && (first.IsZero() || d.Arrived.Before(first)) {
				first = d.Arrived
			}
		}
	}
	return first, !first.IsZero()
}

// resumeAfterBack is how long after its partitions were served again
// their processing resumed (Start, Back and Resume+Start are offsets from
// the ledger's start).
func (f FaultReport) resumeAfterBack() time.Duration { return f.Start + f.Resume - f.Back }

// sortedDeliveries returns ds ordered by arrival.
func sortedDeliveries(ds []Delivery) []Delivery {
	out := slices.Clone(ds)
	slices.SortFunc(out, func(a, b Delivery) int { return a.Arrived.Compare(b.Arrived) })
	return out
}

// roundDur rounds d for reports: 10 ms below a minute.
func roundDur(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Second)
}

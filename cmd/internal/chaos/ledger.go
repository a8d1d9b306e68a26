package chaos

import (
	"encoding/json"
	"io"
	"slices"
	"sync"
	"time"
)

// Delivery is one delivery the receiver answered with 2xx.
type Delivery struct {
	Arrived  time.Time // when the request reached the receiver
	Answered time.Time // when the receiver answered it
	Attempt  int       // the Courier-Attempt header
	Daemon   string    // which daemon sent it (a header of its webhook settings)
}

// Fault is one episode of a scenario's fault.
type Fault struct {
	Kind   string    // what was done: "kill -9", "SIGTERM restart", "CLIENT PAUSE", ...
	Target string    // to what: "daemon d2", "redis", "slot 1234 node A -> node B"
	Start  time.Time // when it began
	End    time.Time // when the suite stopped causing it (restart, resume); Start for an instant fault
	Note   string    // what the episode measured on the way (keys moved, enqueues refused)
	// Partitions are the queue's partitions the episode cut off (those a
	// killed master served), Back when the suite saw them served again (a
	// replica promoted): the tally measures when their processing resumed.
	// An episode that took Redis away without partitions sets Back too:
	// when Redis answered again.
	Partitions []int
	Back       time.Time
	// Ready, for an episode that restarted daemons while Redis could not
	// serve them, is each restarted daemon's time from Back until its
	// /readyz answered 200.
	Ready []time.Duration
}

// Ledger records one scenario's jobs: which enqueues Redis acknowledged,
// every delivery the receiver answered, and the faults. It is safe for
// concurrent use; Tally turns it into the scenario's figures.
type Ledger struct {
	mu         sync.Mutex
	start      time.Time
	acked      map[string]time.Time // id -> when its enqueue was acknowledged
	resolved   int                  // ids whose enqueue outcome had to be looked up
	refused    int                  // enqueue calls refused outright (OOM), retried later
	durable    bool                 // the producer asks replicas to confirm its enqueues
	unsure     map[string]bool      // durable: acknowledged ids no replica confirmed
	errs       int                  // errors the producer's client calls returned
	partitions int                  // the queue's partitions (0 or 1: one)
	abandoned  []string             // ids whose enqueue outcome stayed unknown
	deliveries map[string][]Delivery
	aborted    int // requests whose sender went away before the answer
	overlaps   int // requests that arrived while another for the same job was open
	overlapIDs []string
	capOver    int // requests that took their key above its cap
	keyPeak    int // the most requests of one key in flight at once
	faults     []Fault
	notes      []string
	broken     []string // promises broken on the way, beyond the figures
}

// NewLedger returns an empty ledger whose clock starts at start (offsets in
// reports are from it).
func NewLedger(start time.Time) *Ledger {
	return &Ledger{start: start, acked: map[string]time.Time{}, deliveries: map[string][]Delivery{}, unsure: map[string]bool{}}
}

// SetQueue tells the ledger how the scenario's queue is laid out: its
// partitions (to know a job's partition from its id), and whether the
// producer asks replicas to confirm its enqueues (durable).
func (l *Ledger) SetQueue(partitions int, durable bool) {
	l.mu.Lock()
	l.partitions, l.durable = partitions, durable
	l.mu.Unlock()
}

// Unconfirmed records, before they are acknowledged (Acked), that the
// enqueues of ids were not confirmed by a replica: the master stored them
// (ErrNotReplicated), or the producer found them stored after a failed
// call. An id acknowledged already keeps what it was.
func (l *Ledger) Unconfirmed(ids ...string) {
	l.mu.Lock()
	for _, id := range ids {
		if _, ok := l.acked[id]; !ok {
			l.unsure[id] = true
		}
	}
	l.mu.Unlock()
}

// ProducerError counts an error a call of the producer's client returned:
// a failed enqueue or lookup, or a job's own error in an enqueue's result
// (other than ErrNotReplicated, counted as unconfirmed).
func (l *Ledger) ProducerError() {
	l.mu.Lock()
	l.errs++
	l.mu.Unlock()
}

// Acked records that Redis acknowledged the enqueue of ids at at; resolved
// says the call itself failed and the suite found out afterwards that the
// jobs are stored.
func (l *Ledger) Acked(at time.Time, resolved bool, ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if _, ok := l.acked[id]; !ok {
			l.acked[id] = at
			if resolved {
				l.resolved++
			}
		}
	}
}

// Refused counts enqueue calls Redis refused outright.
func (l *Ledger) Refused(n int) {
	l.mu.Lock()
	l.refused += n
	l.mu.Unlock()
}

// Abandoned records ids whose enqueue outcome the producer could not learn
// before it had to stop: they never count as enqueued.
func (l *Ledger) Abandoned(ids ...string) {
	l.mu.Lock()
	l.abandoned = append(l.abandoned, ids...)
	l.mu.Unlock()
}

// Deliver records a delivery of id.
func (l *Ledger) Deliver(id string, d Delivery) {
	l.mu.Lock()
	l.deliveries[id] = append(l.deliveries[id], d)
	l.mu.Unlock()
}

// Aborted counts a request whose sender hung up before it was answered
// (a cancelled attempt): not a delivery.
func (l *Ledger) Aborted() {
	l.mu.Lock()
	l.aborted++
	l.mu.Unlock()
}

// Overlapped records a request for id that arrived while another request
// for id was still open.
func (l *Ledger) Overlapped(id string) {
	l.mu.Lock()
	l.overlaps++
	if len(l.overlapIDs) < sampleMax {
		l.overlapIDs = append(l.overlapIDs, id)
	}
	l.mu.Unlock()
}

// KeyOver records a request that took its job's key above its cap.
func (l *Ledger) KeyOver() {
	l.mu.Lock()
	l.capOver++
	l.mu.Unlock()
}

// KeyOpen records that a key has n requests in flight.
func (l *Ledger) KeyOpen(n int) {
	l.mu.Lock()
	l.keyPeak = max(l.keyPeak, n)
	l.mu.Unlock()
}

// KeyPeak is the most requests of one key KeyOpen saw in flight at once.
func (l *Ledger) KeyPeak() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keyPeak
}

// CapViolations counts the requests KeyOver recorded.
func (l *Ledger) CapViolations() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.capOver
}

// Delivered reports whether id was delivered at least once.
func (l *Ledger) Delivered(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.deliveries[id]) > 0
}

// AddFault records a fault episode.
func (l *Ledger) AddFault(f Fault) {
	if f.End.IsZero() {
		f.End = f.Start
	}
	l.mu.Lock()
	l.faults = append(l.faults, f)
	l.mu.Unlock()
}

// Note records a remark for the scenario's report.
func (l *Ledger) Note(s string) {
	l.mu.Lock()
	l.notes = append(l.notes, s)
	l.mu.Unlock()
}

// Break records a promise broken on the way that the figures do not show,
// such as a daemon that did not exit 0 after SIGTERM.
func (l *Ledger) Break(s string) {
	l.mu.Lock()
	l.broken = append(l.broken, s)
	l.mu.Unlock()
}

// refusedSoFar returns how many enqueue calls were refused so far.
func (l *Ledger) refusedSoFar() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// Missing returns the acknowledged ids not delivered yet, sorted.
func (l *Ledger) Missing() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id := range l.acked {
		if len(l.deliveries[id]) == 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// DeliveredIDs returns the acknowledged ids delivered at least once.
func (l *Ledger) DeliveredIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id := range l.acked {
		if len(l.deliveries[id]) > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// Enqueued returns how many enqueues were acknowledged so far.
func (l *Ledger) Enqueued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// Since returns t as an offset from the ledger's start.
func (l *Ledger) Since(t time.Time) time.Duration { return t.Sub(l.start) }

// ledgerDump is the ledger as written to a scenario's directory, for a
// reader who wants to check a figure by hand.
type ledgerDump struct {
	Start       time.Time             `json:"start"`
	Acked       map[string]time.Time  `json:"acked"`
	Deliveries  map[string][]Delivery `json:"deliveries"`
	Faults      []Fault               `json:"faults"`
	Abandoned   []string              `json:"abandoned,omitempty"`
	Partitions  int                   `json:"partitions,omitempty"`
	Unconfirmed []string              `json:"unconfirmed,omitempty"` // durable: acknowledged, no replica confirmed
}

// WriteTo writes the whole ledger as JSON.
func (l *Ledger) WriteTo(w io.Writer) (int64, error) {
	l.mu.Lock()
	unsure := make([]string, 0, len(l.unsure))
	for id := range l.unsure {
		unsure = append(unsure, id)
	}
	slices.Sort(unsure)
	data, err := json.Marshal(ledgerDump{l.start, l.acked, l.deliveries, l.faults, l.abandoned, l.partitions, unsure})
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	return int64(n), err
}

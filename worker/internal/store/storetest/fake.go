package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Fake is an in-memory store that keeps the scripts' semantics (see
// lua/*.lua), and RunContract holds it to them: a job is in exactly one of
// due / active / dead / completed, every claim call takes the queue's next claim token
// and bumps the attempt of the jobs it takes, and writes carrying a stale
// token do nothing. Its clock is time.Now plus an optional skew, in whole µs
// like Redis's TIME, so inside a synctest bubble it follows the bubble's fake
// clock. Scores are whole milliseconds, as in Redis. Recorded call times are
// local.
//
// Every call is recorded, so tests can count Redis round trips.
type Fake struct {
	t testing.TB

	mu         sync.Mutex
	queues     map[string]map[string]*Job // queue → id → job
	issued     map[string]int64           // queue → the last claim token handed out; a rollback leaves it alone
	calls      []Call
	onWake     func(queue string, runAtMs int64)   // set while subscribed
	onCancel   func(queue string, tok store.Token) // set while subscribed; may be nil
	subscribed map[string]bool
	outbox     []wakeMsg       // published under mu, delivered after unlocking
	failClaims int             // fail this many of the next claims
	down       bool            // every call but Subscribe fails, as in a Redis outage
	downQueues map[string]bool // Ack and Extend of these queues fail (their node is down)
	subBreak   time.Duration
	skew       time.Duration // Redis clock minus the local clock
	latency    map[string]time.Duration
	rate       map[string][]rateEntry // queue → claims in its rate window, oldest first
	paused     map[string]bool        // queues paused by Pause
	// loseCancels: Cancel of a running job publishes nothing (LoseCancels)
	loseCancels bool
}

// rateEntry is one claim call that took jobs, as the rate zset of
// lua/claim.lua holds it.
type rateEntry struct {
	At time.Time // Redis clock
	N  int
}

// Job is one job of a Fake: its record and the set it is in.
type Job struct {
	Rec   store.Record // Claim only while active; RunAt unused: Score holds it while due
	State store.Set    // SetDue, SetActive, SetDead, SetCompleted or SetCancelled
	Score time.Time    // run-at (due), lease deadline (active), time of death (dead), finish time (completed)
	Bad   bool         // Claim reports it in Claimed.Bad instead of Jobs
}

// Call is one recorded call of a Fake.
type Call struct {
	Method  string
	Queue   string // empty for Extend
	At      time.Time
	N       int        // Claim: n asked; Recover: limit
	Rate    store.Rate // Claim: the rate limit passed
	Limited bool       // Claim: reported the rate limit used up
	Paused  bool       // Claim: reported the queue paused
	Got     int        // Claim: jobs handed out (Bad included); Ack/Snooze: moved; Retry/Kill/Pause/Resume: 1 if changed
	Lease   time.Duration
	Delay   time.Duration
	ErrText string
	Max     int // Recover: default max attempts
	Toks    []store.Token
	ByQueue map[string][]store.Token // Extend
	Err     error                    // the error returned
}

type wakeMsg struct {
	queue  string
	at     int64
	cancel store.Token // the run of a job cancelled while it ran; at is unused
}

// errDown is what every call returns while the fake's Redis is down.
var errDown = errors.New("fake redis: connection refused")

// NewFake returns an empty Fake that reports misuse (calls the scripts
// would refuse) as errors of t.
func NewFake(t testing.TB) *Fake {
	return &Fake{
		t:          t,
		queues:     make(map[string]map[string]*Job),
		issued:     make(map[string]int64),
		subscribed: make(map[string]bool),
		latency:    make(map[string]time.Duration),
		rate:       make(map[string][]rateEntry),
	}
}

// nowLocked is the Redis clock, which TIME reads in whole µs.
func (f *Fake) nowLocked() time.Time { return time.UnixMicro(time.Now().Add(f.skew).UnixMicro()) }

// ms truncates t to whole milliseconds, the resolution of Redis scores.
func ms(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()) }

// wholeMs is d as store's wrappers pass it to the scripts: whole ms,
// truncated.
func wholeMs(d time.Duration) time.Duration {
	return time.Duration(d.Milliseconds()) * time.Millisecond
}

// after is the score a script computes for now + d: the clock in whole ms
// plus d in whole ms.
func after(now time.Time, d time.Duration) time.Time { return ms(now).Add(wholeMs(d)) }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nextTokenLocked takes the next claim token of queue: a number never
// handed out before in that queue, even after a rollback (Checkpoint).
// claim.lua takes max(claims[”] + 1, the Redis clock in µs), and lost
// writes cannot roll the clock back, so the clock alone keeps tokens
// unique. The fake stands in for the clock with issued, which Checkpoint
// does not save or restore, so that its tokens stay small numbers tests
// can name: 1, 2, 3, … in the order they are handed out.
func (f *Fake) nextTokenLocked(queue string) int64 {
	f.issued[queue]++
	return f.issued[queue]
}

// leave ends the running attempt of an active job: it moves to set s at
// score, and its claim token is gone.
func (j *Job) leave(s store.Set, score time.Time) {
	j.State, j.Score, j.Rec.Claim = s, score, 0
	j.Rec.Progress = nil // the attempt's, gone with its claim
}

// unlock releases mu and then delivers the wake-ups published under it, as
// Redis delivers a PUBLISH after the script ends.
func (f *Fake) unlock() {
	out, wake, cancel := f.outbox, f.onWake, f.onCancel
	f.outbox = nil
	f.mu.Unlock()
	for _, m := range out {
		switch {
		case m.cancel != (store.Token{}):
			if cancel != nil {
				cancel(m.queue, m.cancel)
			}
		case wake != nil:
			wake(m.queue, m.at)
		}
	}
}

// headLocked returns the run-at of the earliest due job of queue.
func (f *Fake) headLocked(queue string) (time.Time, bool) {
	var head time.Time
	found := false
	for _, j := range f.queues[queue] {
		if j.State == store.SetDue && (!found || j.Score.Before(head)) {
			head, found = j.Score, true
		}
	}
	return head, found
}

// publishLocked is lua/record.lua's wake: announce score when it is earlier
// than the previous head.
func (f *Fake) publishLocked(queue string, prev time.Time, hadPrev bool, score time.Time) {
	if hadPrev && !score.Before(prev) {
		return
	}
	if f.subscribed[queue] {
		f.outbox = append(f.outbox, wakeMsg{queue: queue, at: score.UnixMilli()})
	}
}

func (f *Fake) record(c Call) {
	f.calls = append(f.calls, c)
}

// sleep models a Redis round trip for method, when the test set one.
func (f *Fake) sleep(method string) {
	f.mu.Lock()
	d := f.latency[method]
	f.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}

// heldLocked returns the job when it is active under tok.
func (f *Fake) heldLocked(queue string, tok store.Token) *Job {
	j := f.queues[queue][tok.ID]
	if j == nil || j.State != store.SetActive || j.Rec.Claim != tok.Claim {
		return nil
	}
	return j
}

// downLocked reports whether Redis is down. When it is, it records c as
// failed with an error that starts with what, as store's wrappers word it.
func (f *Fake) downLocked(c *Call, what string) bool {
	if !f.down && !f.downQueues[c.Queue] {
		return false
	}
	c.Err = fmt.Errorf("%s: %w", what, errDown)
	f.record(*c)
	return true
}

// queueLocked returns the jobs of queue, making the map on first use.
func (f *Fake) queueLocked(queue string) map[string]*Job {
	q := f.queues[queue]
	if q == nil {
		q = make(map[string]*Job)
		f.queues[queue] = q
	}
	return q
}

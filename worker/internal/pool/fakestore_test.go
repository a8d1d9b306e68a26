package pool_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// fakeStore is an in-memory pool.Store that keeps the scripts' semantics (see
// lua/*.lua): a job is in exactly one of due / active / dead, every claim
// bumps the claim token and the attempt, and writes carrying a stale token do
// nothing. Its clock is time.Now plus an optional skew, so inside a synctest
// bubble it follows the pool's fake clock. Scores are whole milliseconds, as
// in Redis. Recorded call times are local.
//
// Every call the pool makes is recorded, so tests can count Redis round trips.
type fakeStore struct {
	t testing.TB

	mu         sync.Mutex
	queues     map[string]map[string]*fakeJob // queue → id → job
	calls      []fakeCall
	onWake     func(queue string, runAtMs int64) // set while subscribed
	subscribed map[string]bool
	outbox     []wakeMsg // published under mu, delivered after unlocking
	failClaims int       // fail this many of the next claims
	down       bool      // every call but Subscribe fails, as in a Redis outage
	subBreak   time.Duration
	skew       time.Duration // Redis clock minus the local clock
	latency    map[string]time.Duration
	rate       map[string][]rateEntry // queue → claims in its rate window, oldest first
}

// rateEntry is one claim call that took jobs, as the rate zset of
// lua/claim.lua holds it.
type rateEntry struct {
	At time.Time // Redis clock
	N  int
}

var _ pool.Store = (*fakeStore)(nil)

type jobState string

const (
	stateDue    jobState = "due"
	stateActive jobState = "active"
	stateDead   jobState = "dead"
)

// fakeJob is one job: its record and the set it is in.
type fakeJob struct {
	Rec   store.Record // RunAt unused; Score holds it while due
	State jobState
	Score time.Time // run-at (due), lease deadline (active), time of death (dead)
	Bad   bool      // Claim reports it in Claimed.Bad instead of Jobs
}

// fakeCall is one recorded Store call.
type fakeCall struct {
	Method  string
	Queue   string // empty for Extend
	At      time.Time
	N       int        // Claim: n asked; Recover: limit
	Rate    store.Rate // Claim: the rate limit passed
	Limited bool       // Claim: reported the rate limit used up
	Got     int        // Claim: jobs handed out (Bad included); Ack/Snooze: moved; Retry/Kill: 1 if moved
	Lease   time.Duration
	Delay   time.Duration
	ErrText string
	Max     int // Recover: default max attempts
	Toks    []store.Token
	ByQueue map[string][]store.Token // Extend
	Err     error                    // the error returned
}

type wakeMsg struct {
	queue string
	at    int64
}

var errFake = errors.New("fake redis: connection refused")

func newFakeStore(t testing.TB) *fakeStore {
	return &fakeStore{
		t:          t,
		queues:     make(map[string]map[string]*fakeJob),
		subscribed: make(map[string]bool),
		latency:    make(map[string]time.Duration),
		rate:       make(map[string][]rateEntry),
	}
}

// nowLocked is the Redis clock.
func (f *fakeStore) nowLocked() time.Time { return time.Now().Add(f.skew) }

// ms truncates t to whole milliseconds, the resolution of Redis scores.
func ms(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()) }

// unlock releases mu and then delivers the wake-ups published under it, as
// Redis delivers a PUBLISH after the script ends.
func (f *fakeStore) unlock() {
	out, wake := f.outbox, f.onWake
	f.outbox = nil
	f.mu.Unlock()
	for _, m := range out {
		if wake != nil {
			wake(m.queue, m.at)
		}
	}
}

// headLocked returns the run-at of the earliest due job of queue.
func (f *fakeStore) headLocked(queue string) (time.Time, bool) {
	var head time.Time
	found := false
	for _, j := range f.queues[queue] {
		if j.State == stateDue && (!found || j.Score.Before(head)) {
			head, found = j.Score, true
		}
	}
	return head, found
}

// publishLocked is lua/record.lua's wake: announce score when it is earlier
// than the previous head.
func (f *fakeStore) publishLocked(queue string, prev time.Time, hadPrev bool, score time.Time) {
	if hadPrev && !score.Before(prev) {
		return
	}
	if f.subscribed[queue] {
		f.outbox = append(f.outbox, wakeMsg{queue, score.UnixMilli()})
	}
}

func (f *fakeStore) record(c fakeCall) {
	f.calls = append(f.calls, c)
}

// sleep models a Redis round trip for method, when the test set one.
func (f *fakeStore) sleep(method string) {
	f.mu.Lock()
	d := f.latency[method]
	f.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
}

// --- test controls ---

// Add enqueues job id due at at, publishing a wake-up like enqueue.lua.
func (f *fakeStore) Add(queue, id string, at time.Time) { f.add(queue, id, at, false) }

// AddBad enqueues a job whose record the pool cannot decode.
func (f *fakeStore) AddBad(queue, id string, at time.Time) { f.add(queue, id, at, true) }

func (f *fakeStore) add(queue, id string, at time.Time, bad bool) {
	f.mu.Lock()
	defer f.unlock()
	if f.queues[queue] == nil {
		f.queues[queue] = make(map[string]*fakeJob)
	}
	if _, ok := f.queues[queue][id]; ok {
		f.t.Errorf("fake: job %s/%s added twice", queue, id)
		return
	}
	prev, hadPrev := f.headLocked(queue)
	at = ms(at)
	f.queues[queue][id] = &fakeJob{
		Rec:   store.Record{ID: id, EnqueuedAt: ms(f.nowLocked()), Payload: []byte(id)},
		State: stateDue,
		Score: at,
		Bad:   bad,
	}
	f.publishLocked(queue, prev, hadPrev, at)
}

// AddActive adds a job held by some worker under claim 1 whose lease ends at
// deadline (a crashed worker's job, for Recover).
func (f *fakeStore) AddActive(queue, id string, deadline time.Time, attempt, maxAttempts int) {
	f.mu.Lock()
	defer f.unlock()
	if f.queues[queue] == nil {
		f.queues[queue] = make(map[string]*fakeJob)
	}
	f.queues[queue][id] = &fakeJob{
		Rec:   store.Record{ID: id, Claim: 1, Attempt: attempt, MaxAttempts: maxAttempts, EnqueuedAt: ms(f.nowLocked())},
		State: stateActive,
		Score: ms(deadline),
	}
}

// Steal simulates the lease of a running job expiring and another worker
// claiming it: the claim token moves on, so the holder's token is stale, and
// the lease is the new holder's.
func (f *fakeStore) Steal(queue, id string) {
	f.mu.Lock()
	defer f.unlock()
	j := f.queues[queue][id]
	if j == nil || j.State != stateActive {
		f.t.Errorf("fake: steal %s/%s: not active", queue, id)
		return
	}
	j.Rec.Claim++
	j.Rec.Attempt++
	j.Score = ms(f.nowLocked().Add(time.Hour)) // the new holder keeps extending it
}

// FailClaims makes the next n claims fail.
func (f *fakeStore) FailClaims(n int) {
	f.mu.Lock()
	f.failClaims = n
	f.mu.Unlock()
}

// SetDown starts (true) or ends a Redis outage: every call but Subscribe fails.
func (f *fakeStore) SetDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// SetSkew sets the Redis clock to the local clock plus d.
func (f *fakeStore) SetSkew(d time.Duration) {
	f.mu.Lock()
	f.skew = d
	f.mu.Unlock()
}

// BreakSubscriptions makes every subscription break after d.
func (f *fakeStore) BreakSubscriptions(d time.Duration) {
	f.mu.Lock()
	f.subBreak = d
	f.mu.Unlock()
}

// SetLatency makes every call of method take d of (fake) time.
func (f *fakeStore) SetLatency(method string, d time.Duration) {
	f.mu.Lock()
	f.latency[method] = d
	f.mu.Unlock()
}

// Job returns a copy of job id of queue.
func (f *fakeStore) Job(queue, id string) (fakeJob, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.queues[queue][id]
	if !ok {
		return fakeJob{}, false
	}
	return *j, true
}

// Len counts the jobs of queue in state s.
func (f *fakeStore) Len(queue string, s jobState) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, j := range f.queues[queue] {
		if j.State == s {
			n++
		}
	}
	return n
}

// Calls returns the recorded calls of method ("" for all), in order.
func (f *fakeStore) Calls(method string) []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Count counts the recorded calls of method on queue ("" for any queue).
func (f *fakeStore) Count(method, queue string) int {
	n := 0
	for _, c := range f.Calls(method) {
		if queue == "" || c.Queue == queue {
			n++
		}
	}
	return n
}

// --- pool.Store ---

// ClaimLimited is claim.lua, recorded as "Claim".
func (f *fakeStore) ClaimLimited(_ context.Context, queue string, n int, lease time.Duration, limit store.Rate) (store.Claimed, error) {
	f.sleep("Claim")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	c := fakeCall{Method: "Claim", Queue: queue, At: time.Now(), N: n, Lease: lease, Rate: limit}
	if n < 1 || lease < time.Millisecond {
		f.t.Errorf("fake: Claim(%s, n=%d, lease=%v): the script rejects this", queue, n, lease)
	}
	if limit != (store.Rate{}) && (limit.N < 1 || limit.Per < time.Millisecond) {
		f.t.Errorf("fake: Claim(%s, limit=%+v): the script rejects this", queue, limit)
	}
	if f.failClaims > 0 || f.down {
		f.failClaims = max(f.failClaims-1, 0)
		c.Err = fmt.Errorf("claim %s: %w", queue, errFake)
		f.record(c)
		return store.Claimed{}, c.Err
	}
	nowMs := ms(now)
	var due []*fakeJob
	for _, j := range f.queues[queue] {
		if j.State == stateDue && !j.Score.After(nowMs) {
			due = append(due, j)
		}
	}
	// ZRANGEBYSCORE order: score, then member.
	slices.SortFunc(due, func(a, b *fakeJob) int {
		return cmp.Or(a.Score.Compare(b.Score), cmp.Compare(a.Rec.ID, b.Rec.ID))
	})
	// The rate window: claims at or before now - Per have left it.
	capacity := store.MaxBatch
	if limit.N > 0 {
		window := f.rate[queue]
		for len(window) > 0 && !window[0].At.After(now.Add(-limit.Per)) {
			window = window[1:]
		}
		f.rate[queue] = window
		capacity = limit.N
		for _, e := range window {
			capacity -= e.N
		}
	}
	due = due[:max(min(len(due), n, capacity), 0)]
	out := store.Claimed{Now: now}
	for _, j := range due {
		runAt := j.Score
		j.Rec.Claim++
		j.Rec.Attempt++
		j.State, j.Score = stateActive, ms(now.Add(lease))
		if j.Bad {
			out.Bad = append(out.Bad, store.BadRecord{
				Token: j.Rec.Token(),
				Err:   fmt.Errorf("job %q: %w: header field 3", j.Rec.ID, store.ErrCorrupt),
			})
			continue
		}
		r := j.Rec
		r.RunAt = runAt
		r.Payload = slices.Clone(r.Payload)
		out.Jobs = append(out.Jobs, r)
	}
	head, ok := f.headLocked(queue)
	if ok {
		out.Next = head
	}
	if limit.N > 0 && len(due) > 0 {
		f.rate[queue] = append(f.rate[queue], rateEntry{At: now, N: len(due)})
	}
	if limit.N > 0 && capacity-len(due) <= 0 && ok {
		// Capacity frees when the oldest claim leaves the window; the script
		// rounds that up to whole ms.
		free := f.rate[queue][0].At.Add(limit.Per)
		if msFree := ms(free); msFree.Before(free) {
			free = msFree.Add(time.Millisecond)
		}
		if !head.After(free) {
			out.Next, out.Limited = free, true
		}
	}
	c.Got, c.Limited = len(due), out.Limited
	f.record(c)
	return out, nil
}

// heldLocked returns the job when it is active under tok.
func (f *fakeStore) heldLocked(queue string, tok store.Token) *fakeJob {
	j := f.queues[queue][tok.ID]
	if j == nil || j.State != stateActive || j.Rec.Claim != tok.Claim {
		return nil
	}
	return j
}

// Ack is ack.lua.
func (f *fakeStore) Ack(_ context.Context, queue string, toks []store.Token) (int, error) {
	f.sleep("Ack")
	f.mu.Lock()
	defer f.unlock()
	if len(toks) == 0 {
		f.t.Errorf("fake: Ack(%s) without tokens", queue)
	}
	if f.down {
		err := fmt.Errorf("ack %s: %w", queue, errFake)
		f.record(fakeCall{Method: "Ack", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Err: err})
		return 0, err
	}
	done := 0
	for _, tok := range toks {
		if f.heldLocked(queue, tok) != nil {
			delete(f.queues[queue], tok.ID)
			done++
		}
	}
	f.record(fakeCall{Method: "Ack", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Got: done})
	return done, nil
}

// Retry is retry.lua with to = due.
func (f *fakeStore) Retry(_ context.Context, queue string, tok store.Token, delay time.Duration, errText string) (bool, error) {
	return f.move("Retry", queue, tok, stateDue, delay, errText)
}

// Kill is retry.lua with to = dead.
func (f *fakeStore) Kill(_ context.Context, queue string, tok store.Token, errText string) (bool, error) {
	return f.move("Kill", queue, tok, stateDead, 0, errText)
}

func (f *fakeStore) move(method, queue string, tok store.Token, to jobState, delay time.Duration, errText string) (bool, error) {
	f.sleep(method)
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	c := fakeCall{Method: method, Queue: queue, At: time.Now(), Toks: []store.Token{tok}, Delay: delay, ErrText: errText}
	if delay < 0 {
		f.t.Errorf("fake: %s(%s, delay=%v): the script rejects this", method, queue, delay)
	}
	if f.down {
		c.Err = fmt.Errorf("move %s job %q: %w", queue, tok.ID, errFake)
		f.record(c)
		return false, c.Err
	}
	j := f.heldLocked(queue, tok)
	if j == nil {
		f.record(c)
		return false, nil
	}
	j.Rec.LastError = errText
	if to == stateDead {
		j.State, j.Score = stateDead, ms(now)
	} else {
		prev, hadPrev := f.headLocked(queue)
		j.State, j.Score = stateDue, ms(now.Add(delay))
		f.publishLocked(queue, prev, hadPrev, j.Score)
	}
	c.Got = 1
	f.record(c)
	return true, nil
}

// Snooze is snooze.lua.
func (f *fakeStore) Snooze(_ context.Context, queue string, toks []store.Token, delay time.Duration) (int, error) {
	f.sleep("Snooze")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	if delay < 0 || len(toks) == 0 {
		f.t.Errorf("fake: Snooze(%s, %d tokens, delay=%v): the script rejects this", queue, len(toks), delay)
	}
	if f.down {
		err := fmt.Errorf("snooze %s: %w", queue, errFake)
		f.record(fakeCall{Method: "Snooze", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Delay: delay, Err: err})
		return 0, err
	}
	prev, hadPrev := f.headLocked(queue)
	moved := 0
	for _, tok := range toks {
		j := f.heldLocked(queue, tok)
		if j == nil {
			continue
		}
		if j.Rec.Attempt > 0 {
			j.Rec.Attempt--
		}
		j.State, j.Score = stateDue, ms(now.Add(delay))
		moved++
	}
	if moved > 0 {
		f.publishLocked(queue, prev, hadPrev, ms(now.Add(delay)))
	}
	f.record(fakeCall{Method: "Snooze", Queue: queue, At: time.Now(), Toks: slices.Clone(toks), Delay: delay, Got: moved})
	return moved, nil
}

// Extend is extend.lua for every queue of byQueue, in one round trip.
func (f *fakeStore) Extend(_ context.Context, byQueue map[string][]store.Token, lease time.Duration) (map[string][]store.Token, error) {
	f.sleep("Extend")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	c := fakeCall{Method: "Extend", At: time.Now(), Lease: lease, ByQueue: make(map[string][]store.Token, len(byQueue))}
	if f.down {
		for queue, toks := range byQueue {
			c.ByQueue[queue] = slices.Clone(toks)
		}
		c.Err = fmt.Errorf("extend: %w", errFake)
		f.record(c)
		return map[string][]store.Token{}, c.Err
	}
	lost := make(map[string][]store.Token)
	for queue, toks := range byQueue {
		if len(toks) == 0 {
			f.t.Errorf("fake: Extend with no tokens for queue %s", queue)
		}
		c.ByQueue[queue] = slices.Clone(toks)
		c.N += len(toks)
		for _, tok := range toks {
			if j := f.heldLocked(queue, tok); j != nil {
				j.Score = ms(now.Add(lease))
			} else {
				lost[queue] = append(lost[queue], tok)
			}
		}
	}
	f.record(c)
	return lost, nil
}

// Recover is recover.lua.
// The pool never calls it (recovery is the carrier's); tests call it to
// play the queue's leader.
func (f *fakeStore) Recover(_ context.Context, queue, _ string, limit, defaultMax int) (store.Recovered, error) {
	f.sleep("Recover")
	f.mu.Lock()
	defer f.unlock()
	now := f.nowLocked()
	if limit < 1 || limit > store.MaxBatch || defaultMax < 1 {
		f.t.Errorf("fake: Recover(%s, limit=%d, defaultMax=%d): the script rejects this", queue, limit, defaultMax)
	}
	if f.down {
		err := fmt.Errorf("recover %s: %w", queue, errFake)
		f.record(fakeCall{Method: "Recover", Queue: queue, At: time.Now(), N: limit, Max: defaultMax, Err: err})
		return store.Recovered{}, err
	}
	nowMs := ms(now)
	var expired []*fakeJob
	for _, j := range f.queues[queue] {
		if j.State == stateActive && j.Score.Before(nowMs) {
			expired = append(expired, j)
		}
	}
	slices.SortFunc(expired, func(a, b *fakeJob) int {
		return cmp.Or(a.Score.Compare(b.Score), cmp.Compare(a.Rec.ID, b.Rec.ID))
	})
	expired = expired[:min(len(expired), limit)]
	prev, hadPrev := f.headLocked(queue)
	var r store.Recovered
	for _, j := range expired {
		maxAttempts := cmp.Or(j.Rec.MaxAttempts, defaultMax)
		if j.Rec.Attempt >= maxAttempts {
			j.Rec.LastError = fmt.Sprintf("lease expired: the worker running attempt %d stopped responding; no attempts left", j.Rec.Attempt)
			j.State, j.Score = stateDead, nowMs
			r.Dead++
		} else {
			j.Rec.LastError = fmt.Sprintf("lease expired: the worker running attempt %d stopped responding", j.Rec.Attempt)
			j.State, j.Score = stateDue, nowMs
			r.Due++
		}
	}
	if r.Due > 0 {
		f.publishLocked(queue, prev, hadPrev, nowMs)
	}
	f.record(fakeCall{Method: "Recover", Queue: queue, At: time.Now(), N: limit, Max: defaultMax, Got: r.Due + r.Dead})
	return r, nil
}

// Subscribe delivers wake-ups of queues until ctx ends.
func (f *fakeStore) Subscribe(ctx context.Context, queues []string, onWake func(queue string, runAtMs int64), onSubscribed func()) error {
	f.mu.Lock()
	if f.onWake != nil {
		f.t.Errorf("fake: two subscriptions at once")
	}
	f.onWake = onWake
	for _, q := range queues {
		f.subscribed[q] = true
	}
	f.record(fakeCall{Method: "Subscribe", At: time.Now(), N: len(queues)})
	brk := f.subBreak
	f.mu.Unlock()
	onSubscribed()
	var broke <-chan time.Time
	if brk > 0 {
		broke = time.After(brk)
	}
	var err error
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case <-broke:
		err = fmt.Errorf("subscribe to wake-ups: %w", errFake)
	}
	f.mu.Lock()
	f.onWake = nil
	clear(f.subscribed)
	f.mu.Unlock()
	return err
}

// sortedKeys returns the keys of m in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Add enqueues job id, with its id as payload, due at at (not the zero
// time), publishing a wake-up like enqueue.lua.
func (f *Fake) Add(queue, id string, at time.Time) { f.add(queue, id, at, false) }

// AddBad enqueues a job whose record the pool cannot decode.
func (f *Fake) AddBad(queue, id string, at time.Time) { f.add(queue, id, at, true) }

func (f *Fake) add(queue, id string, at time.Time, bad bool) {
	f.mu.Lock()
	defer f.unlock()
	if _, ok := f.queues[queue][id]; ok {
		f.t.Errorf("fake: job %s/%s added twice", queue, id)
		return
	}
	f.enqueueLocked(queue, []store.NewJob{{ID: id, At: at, Payload: []byte(id)}})
	f.queues[queue][id].Bad = bad
}

// AddActive adds a job held by some worker, under the queue's next claim
// token, whose lease ends at deadline (a crashed worker's job, for Recover).
func (f *Fake) AddActive(queue, id string, deadline time.Time, attempt, maxAttempts int) {
	f.mu.Lock()
	defer f.unlock()
	f.queueLocked(queue)[id] = &Job{
		Rec:   store.Record{ID: id, Claim: f.nextTokenLocked(queue), Attempt: attempt, MaxAttempts: maxAttempts, EnqueuedAt: ms(f.nowLocked())},
		State: store.SetActive,
		Score: ms(deadline),
	}
}

// Steal simulates the lease of a running job expiring and another worker
// claiming it: the claim token moves on, so the holder's token is stale, and
// the lease is the new holder's.
func (f *Fake) Steal(queue, id string) {
	f.mu.Lock()
	defer f.unlock()
	j := f.queues[queue][id]
	if j == nil || j.State != store.SetActive {
		f.t.Errorf("fake: steal %s/%s: not active", queue, id)
		return
	}
	j.Rec.Claim = f.nextTokenLocked(queue)
	j.Rec.Attempt++
	j.Score = ms(f.nowLocked().Add(time.Hour)) // the new holder keeps extending it
}

// Checkpoint remembers what queue holds and returns a function that rolls
// the queue back to it, as Redis does when it loses the writes made since
// (a crash under appendfsync everysec, an asynchronous failover, a
// restore): jobs, their sets and attempts, and the rate window. Claim
// tokens handed out since are never handed out again: the token counter
// stands for the Redis clock, which a rollback does not turn back.
func (f *Fake) Checkpoint(_ *testing.T, queue string) (rollBack func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	jobs := cloneJobs(f.queues[queue])
	rate := slices.Clone(f.rate[queue])
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.queues[queue] = cloneJobs(jobs)
		f.rate[queue] = slices.Clone(rate)
	}
}

// cloneJobs copies the jobs of a queue.
func cloneJobs(jobs map[string]*Job) map[string]*Job {
	out := make(map[string]*Job, len(jobs))
	for id, j := range jobs {
		c := *j
		c.Rec.Payload = slices.Clone(j.Rec.Payload)
		out[id] = &c
	}
	return out
}

// FailClaims makes the next n claims fail.
func (f *Fake) FailClaims(n int) {
	f.mu.Lock()
	f.failClaims = n
	f.mu.Unlock()
}

// SetDown starts (true) or ends a Redis outage: every call but Subscribe fails.
func (f *Fake) SetDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// SetQueueDown makes Ack and Extend of queue fail while down is true, as
// when the Cluster node that serves the queue is unreachable; the other
// queues' calls go on.
func (f *Fake) SetQueueDown(queue string, down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.downQueues == nil {
		f.downQueues = make(map[string]bool)
	}
	f.downQueues[queue] = down
}

// SetSkew sets the Redis clock to the local clock plus d.
func (f *Fake) SetSkew(d time.Duration) {
	f.mu.Lock()
	f.skew = d
	f.mu.Unlock()
}

// BreakSubscriptions makes every subscription break after d.
func (f *Fake) BreakSubscriptions(d time.Duration) {
	f.mu.Lock()
	f.subBreak = d
	f.mu.Unlock()
}

// LoseCancels makes the cancels of running jobs publish nothing, as if
// every such message were lost: their workers learn of them at their next
// lease extension.
func (f *Fake) LoseCancels() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loseCancels = true
}

// SetLatency makes every call of method take d of (fake) time.
func (f *Fake) SetLatency(method string, d time.Duration) {
	f.mu.Lock()
	f.latency[method] = d
	f.mu.Unlock()
}

// Job returns a copy of job id of queue.
func (f *Fake) Job(queue, id string) (Job, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.queues[queue][id]
	if !ok {
		return Job{}, false
	}
	return *j, true
}

// Len counts the jobs of queue in set s.
func (f *Fake) Len(queue string, s store.Set) int {
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
func (f *Fake) Calls(method string) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, c := range f.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Count counts the recorded calls of method on queue ("" for any queue).
func (f *Fake) Count(method, queue string) int {
	n := 0
	for _, c := range f.Calls(method) {
		if queue == "" || c.Queue == queue {
			n++
		}
	}
	return n
}

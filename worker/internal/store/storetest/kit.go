package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Names and durations the contract's cases share.
const (
	q          = "q"                   // the queue of every case
	other      = "r"                   // a second queue, where a case needs one
	long       = time.Hour             // a lease or delay no case waits out
	shortLease = 50 * time.Millisecond // a lease the lease-lost cases wait out
	waitLimit  = 5 * time.Second       // how long a case waits for the backend
)

// kit is one case's backend with the calls the cases make, each failing the
// test on an error.
type kit struct {
	t *testing.T
	b Backend
	// cancels receives the runs the subscription (subscribe) reports
	// cancelled: the id and the claim each cancel ended.
	cancels chan store.Token
}

func (k *kit) ctx() context.Context { return k.t.Context() }

// enqueue adds jobs to queue q and fails unless every one was added.
func (k *kit) enqueue(jobs ...store.NewJob) { k.enqueueTo(q, jobs...) }

func (k *kit) enqueueTo(queue string, jobs ...store.NewJob) {
	k.t.Helper()
	added, err := k.b.Enqueue(k.ctx(), queue, jobs)
	if err != nil || len(added) != len(jobs) || slices.Contains(added, false) {
		k.t.Fatalf("Enqueue(%s, %d jobs) = %v, %v; want every job added", queue, len(jobs), added, err)
	}
}

// claim claims up to n jobs of q without a rate limit.
func (k *kit) claim(n int, lease time.Duration) store.Claimed {
	k.t.Helper()
	return k.claimFrom(q, n, lease, store.Rate{})
}

func (k *kit) claimFrom(queue string, n int, lease time.Duration, limit store.Rate) store.Claimed {
	k.t.Helper()
	c, err := k.b.ClaimLimited(k.ctx(), queue, n, lease, limit)
	if err != nil || len(c.Bad) > 0 || c.Corrupt > 0 {
		k.t.Fatalf("Claim(%s, %d) = %+v, %v", queue, n, c, err)
	}
	return c
}

// claimOne claims exactly one job of q.
func (k *kit) claimOne(lease time.Duration) store.Record {
	k.t.Helper()
	c := k.claim(1, lease)
	if len(c.Jobs) != 1 {
		k.t.Fatalf("Claim(1) took %v, want one job", ids(c.Jobs))
	}
	return c.Jobs[0]
}

// claimTwice enqueues job j (payload "p"), claims it, hands it back with a
// snooze of 0 and claims it again; it fails unless the second claim is in
// attempt 1 still, under a new token.
func (k *kit) claimTwice() (first, second store.Record) {
	k.t.Helper()
	k.enqueue(store.NewJob{ID: "j", Payload: []byte("p")})
	first = k.claimOne(long)
	if n := k.snooze(0, first.Token()); n != 1 {
		k.t.Fatalf("Snooze = %d, want 1", n)
	}
	second = k.claimOne(long)
	claimed(k.t, second, "j", 1, "")
	if second.Claim == first.Claim {
		k.t.Fatalf("the second claim reused token %d", first.Claim)
	}
	return first, second
}

// clock reads the backend's clock, in whole ms, through a claim of q that
// must find nothing due.
func (k *kit) clock() time.Time {
	k.t.Helper()
	c := k.claim(1, long)
	if len(c.Jobs) > 0 {
		k.t.Fatalf("clock: the claim took %v", ids(c.Jobs))
	}
	return ms(c.Now)
}

func (k *kit) get(id string) store.Snapshot {
	k.t.Helper()
	return k.getFrom(q, id)
}

func (k *kit) getFrom(queue, id string) store.Snapshot {
	k.t.Helper()
	snap, err := k.b.Get(k.ctx(), queue, id)
	if err != nil {
		k.t.Fatalf("Get(%s, %s): %v", queue, id, err)
	}
	return snap
}

// gone fails unless job id of q does not exist.
func (k *kit) gone(id string) {
	k.t.Helper()
	if snap, err := k.b.Get(k.ctx(), q, id); !errors.Is(err, store.ErrNotFound) {
		k.t.Errorf("Get(%s) = %+v, %v; want ErrNotFound", id, snap, err)
	}
}

func (k *kit) ack(toks ...store.Token) int {
	k.t.Helper()
	n, err := k.b.Ack(k.ctx(), q, toks)
	if err != nil {
		k.t.Fatalf("Ack: %v", err)
	}
	return n
}

func (k *kit) complete(done ...store.Completion) int {
	k.t.Helper()
	n, err := k.b.Complete(k.ctx(), q, done)
	if err != nil {
		k.t.Fatalf("Complete: %v", err)
	}
	return n
}

func (k *kit) retry(tok store.Token, delay time.Duration, errText string) bool {
	k.t.Helper()
	ok, err := k.b.Retry(k.ctx(), q, tok, delay, errText)
	if err != nil {
		k.t.Fatalf("Retry: %v", err)
	}
	return ok
}

func (k *kit) kill(tok store.Token, errText string) bool {
	k.t.Helper()
	ok, err := k.b.Kill(k.ctx(), q, tok, errText)
	if err != nil {
		k.t.Fatalf("Kill: %v", err)
	}
	return ok
}

func (k *kit) snooze(delay time.Duration, toks ...store.Token) int {
	k.t.Helper()
	n, err := k.b.Snooze(k.ctx(), q, toks, delay)
	if err != nil {
		k.t.Fatalf("Snooze: %v", err)
	}
	return n
}

// extend returns the tokens Extend reports lost; extendLost says why too.
func (k *kit) extend(byQueue map[string][]store.Token, lease time.Duration) map[string][]store.Token {
	k.t.Helper()
	toks := make(map[string][]store.Token)
	for queue, lost := range k.extendLost(byQueue, lease) {
		for _, l := range lost {
			toks[queue] = append(toks[queue], l.Token)
		}
	}
	return toks
}

func (k *kit) extendLost(byQueue map[string][]store.Token, lease time.Duration) map[string][]store.Lost {
	k.t.Helper()
	lost, err := k.b.Extend(k.ctx(), Renewals(byQueue), lease)
	if err != nil {
		k.t.Fatalf("Extend: %v", err)
	}
	return lost
}

// recover runs Recover on q as its leader.
func (k *kit) recover(defaultMax int) store.Recovered {
	k.t.Helper()
	r, err := k.b.Recover(k.ctx(), q, k.b.Lead(k.t, q), 100, defaultMax)
	if err != nil {
		k.t.Fatalf("Recover: %v", err)
	}
	return r
}

func (k *kit) cancel(id string) store.CancelResult {
	k.t.Helper()
	res, err := k.b.Cancel(k.ctx(), q, id)
	if err != nil {
		k.t.Fatalf("Cancel(%s): %v", id, err)
	}
	return res
}

func (k *kit) requeue(ids ...string) []bool {
	k.t.Helper()
	return k.requeueFrom(store.SetDead, ids...)
}

func (k *kit) requeueFrom(from store.Set, ids ...string) []bool {
	k.t.Helper()
	moved, err := k.b.Requeue(k.ctx(), q, from, ids)
	if err != nil {
		k.t.Fatalf("Requeue: %v", err)
	}
	return moved
}

// waitExpired waits until the backend's clock has passed the lease deadline
// of every job ids of q, and returns the clock reading that saw it.
func (k *kit) waitExpired(ids ...string) time.Time {
	k.t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitLimit)
	for {
		var now, last time.Time
		for _, id := range ids {
			snap := k.get(id)
			now, last = snap.Now, maxTime(last, snap.Score)
		}
		if now.After(last) {
			return now
		}
		select {
		case <-tick.C:
		case <-deadline:
			k.t.Fatalf("the leases of %v did not expire within %v", ids, waitLimit)
		}
	}
}

// subscribe listens to q's wake-ups until the test ends and returns the
// run-ats announced, in order. Subscribe before the first write: on a
// cluster, a message published shortly before the subscription can still be
// delivered after it.
func (k *kit) subscribe() <-chan int64 {
	k.t.Helper()
	wakes := make(chan int64, 64)
	k.cancels = make(chan store.Token, 64)
	subscribed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(k.ctx())
	done := make(chan error, 1)
	go func() {
		done <- k.b.Subscribe(ctx, []string{q}, func(queue string, runAt int64) {
			if queue != q {
				k.t.Errorf("wake-up for queue %q, want %q", queue, q)
			}
			wakes <- runAt
		}, func(queue string, tok store.Token) {
			if queue != q {
				k.t.Errorf("cancel for queue %q, want %q", queue, q)
			}
			k.cancels <- tok
		}, func() {
			select {
			case subscribed <- struct{}{}:
			default:
			}
		})
	}()
	k.t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			k.t.Errorf("Subscribe returned %v, want context.Canceled", err)
		}
	})
	select {
	case <-subscribed:
	case err := <-done:
		k.t.Fatalf("Subscribe: %v", err)
	case <-time.After(waitLimit):
		k.t.Fatalf("no subscription within %v", waitLimit)
	}
	return wakes
}

// nextWake returns the next wake-up's run-at.
func (k *kit) nextWake(wakes <-chan int64) time.Time {
	k.t.Helper()
	select {
	case at := <-wakes:
		return time.UnixMilli(at)
	case <-time.After(waitLimit):
		k.t.Fatalf("no wake-up within %v", waitLimit)
		return time.Time{}
	}
}

func ids(recs []store.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// pause pauses q (on) or resumes it, and returns whether that changed it.
func (k *kit) pause(on bool) bool {
	k.t.Helper()
	f, what := k.b.Resume, "Resume"
	if on {
		f, what = k.b.Pause, "Pause"
	}
	changed, err := f(k.ctx(), q)
	if err != nil {
		k.t.Fatalf("%s: %v", what, err)
	}
	return changed
}

// paused reports whether q is paused.
func (k *kit) paused() bool {
	k.t.Helper()
	p, err := k.b.Paused(k.ctx(), q)
	if err != nil {
		k.t.Fatalf("Paused: %v", err)
	}
	return p
}

// Renewals is byQueue as Extend takes it: renewals that report no
// progress.
func Renewals(byQueue map[string][]store.Token) map[string][]store.Renewal {
	rs := make(map[string][]store.Renewal, len(byQueue))
	for queue, toks := range byQueue {
		for _, tok := range toks {
			rs[queue] = append(rs[queue], store.Renewal{Token: tok})
		}
	}
	return rs
}

package lock

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeRedis is an in-memory backend with the lock scripts' semantics, for
// driving the watchdog and waiter timing inside synctest bubbles, where time
// is fake and no network I/O may run. It is not an oracle of the scripts:
// TestBackendContract holds it to the scripts' answers on real Redis.
type fakeRedis struct {
	mu     sync.Mutex
	locks  map[string]*fakeLock
	subs   map[string][]*fakeSub
	renews []renewCall

	// renewErr, when set, decides the outcome of a renewal call sent at
	// the given time: a non-nil error fails every renewal of the call.
	renewErr func(at time.Time) error
	// renewHang makes renewal calls block until their context ends.
	renewHang bool
	// renewSlow delays a renewal's answer (not its effect) by this long,
	// or until its context ends.
	renewSlow time.Duration
	// silent drops unlock messages: a release publishes nothing.
	silent bool
	// acquireDelay and releaseDelay are how long an acquire or a release
	// takes to reach the fake and answer; it runs even if its context ends
	// meanwhile, as a script on the wire does.
	acquireDelay, releaseDelay time.Duration
	// lose, when set, is asked before each acquire ("acquire") and release
	// ("release"): errLostReply makes the call run in full and its reply
	// get lost; any other error fails the call before it runs.
	lose func(op string) error
}

// errLostReply is the error of a call whose reply was lost after it ran.
var errLostReply = errors.New("connection reset: reply lost")

// fate asks f.lose what happens to a call of op: an error before it runs,
// or errLostReply to return once it ran.
func (f *fakeRedis) fate(op string) (before, after error) {
	f.mu.Lock()
	lose := f.lose
	f.mu.Unlock()
	if lose == nil {
		return nil, nil
	}
	switch err := lose(op); {
	case errors.Is(err, errLostReply):
		return nil, err
	default:
		return err, nil
	}
}

type fakeLock struct {
	fields  map[string]int
	expires time.Time // zero: no TTL
}

type fakeSub struct {
	onMessage func()
}

// renewCall is one renewal round trip as the fake saw it.
type renewCall struct {
	at    time.Time
	lease time.Duration
	locks []lockRef
}

var _ backend = (*fakeRedis)(nil)

func newFakeRedis() *fakeRedis {
	return &fakeRedis{locks: make(map[string]*fakeLock), subs: make(map[string][]*fakeSub)}
}

// get returns the live lock name, dropping it once expired (as Redis does
// on access). f.mu must be held.
func (f *fakeRedis) get(name string) *fakeLock {
	l := f.locks[name]
	if l != nil && !l.expires.IsZero() && !time.Now().Before(l.expires) {
		delete(f.locks, name)
		return nil
	}
	return l
}

func (f *fakeRedis) acquire(ctx context.Context, name, field string, lease time.Duration) (bool, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return false, 0, err
	}
	f.mu.Lock()
	delay := f.acquireDelay
	f.mu.Unlock()
	time.Sleep(delay)
	if err := checkLease(lease); err != nil {
		return false, 0, err
	}
	before, after := f.fate("acquire")
	if before != nil {
		return false, 0, before
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.get(name)
	if l == nil {
		l = &fakeLock{fields: make(map[string]int)}
		f.locks[name] = l
	} else if l.fields[field] == 0 {
		if l.expires.IsZero() {
			return false, -time.Millisecond, after
		}
		return false, time.Until(l.expires), after
	}
	l.fields[field]++
	l.expires = time.Now().Add(lease)
	return after == nil, 0, after
}

func (f *fakeRedis) release(ctx context.Context, name, channel, field string, lease time.Duration) (releaseResult, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f.mu.Lock()
	delay := f.releaseDelay
	f.mu.Unlock()
	time.Sleep(delay)
	if err := checkLease(lease); err != nil {
		return 0, err
	}
	before, after := f.fate("release")
	if before != nil {
		return 0, before
	}
	f.mu.Lock()
	l := f.get(name)
	if l == nil || l.fields[field] == 0 {
		f.mu.Unlock()
		return releaseNotHeld, after
	}
	if l.fields[field]--; l.fields[field] > 0 {
		l.expires = time.Now().Add(lease)
		f.mu.Unlock()
		return releaseDecremented, after
	}
	delete(f.locks, name)
	var subs []*fakeSub
	if !f.silent {
		subs = slices.Clone(f.subs[channel])
	}
	f.mu.Unlock()
	for _, s := range subs {
		s.onMessage()
	}
	return releaseDeleted, after
}

func (f *fakeRedis) renew(ctx context.Context, lease time.Duration, locks []lockRef) []renewResult {
	now := time.Now()
	f.mu.Lock()
	f.renews = append(f.renews, renewCall{at: now, lease: lease, locks: slices.Clone(locks)})
	hang, fail := f.renewHang, f.renewErr
	f.mu.Unlock()
	out := make([]renewResult, len(locks))
	failAll := func(err error) []renewResult {
		for i := range out {
			out[i].err = err
		}
		return out
	}
	if hang {
		<-ctx.Done()
		return failAll(ctx.Err())
	}
	if fail != nil {
		if err := fail(now); err != nil {
			return failAll(err)
		}
	}
	if err := checkLease(lease); err != nil {
		return failAll(err)
	}
	f.mu.Lock()
	for i, r := range locks {
		if l := f.get(r.name); l != nil && l.fields[r.field] > 0 {
			l.expires = now.Add(lease)
			out[i].held = true
		}
	}
	slow := f.renewSlow
	f.mu.Unlock()
	if slow > 0 {
		t := time.NewTimer(slow)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return failAll(ctx.Err())
		}
	}
	return out
}

func (f *fakeRedis) subscribe(ctx context.Context, channel string, onSubscribed, onMessage func()) error {
	s := &fakeSub{onMessage: onMessage}
	f.mu.Lock()
	f.subs[channel] = append(f.subs[channel], s)
	f.mu.Unlock()
	onSubscribed()
	<-ctx.Done()
	f.mu.Lock()
	f.subs[channel] = slices.DeleteFunc(f.subs[channel], func(x *fakeSub) bool { return x == s })
	f.mu.Unlock()
	return ctx.Err()
}

// errLeaseNotPositive is the scripts' answer to a lease under 1ms (sent
// as whole milliseconds, it would be PEXPIRE 0 and delete the lock).
var errLeaseNotPositive = errors.New("ERR courier: lease_ms must be positive")

// checkLease refuses what the scripts refuse before their first write.
func checkLease(lease time.Duration) error {
	if lease < time.Millisecond {
		return errLeaseNotPositive
	}
	return nil
}

// del deletes a lock behind its holders' backs, publishing nothing.
func (f *fakeRedis) del(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.locks, name)
}

// count returns field's hold count on name (0 when absent or expired).
func (f *fakeRedis) count(name, field string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l := f.get(name); l != nil {
		return l.fields[field]
	}
	return 0
}

func (f *fakeRedis) renewCalls() []renewCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.renews)
}

func (f *fakeRedis) subscribers(channel string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs[channel])
}

func (f *fakeRedis) set(apply func(f *fakeRedis)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	apply(f)
}

// fakeClient returns a Client on f, closed at cleanup (inside the bubble
// when called inside one).
func fakeClient(t *testing.T, f *fakeRedis, opts Options) *Client {
	t.Helper()
	c, err := fakeClientErr(f, opts)
	if err != nil {
		t.Fatalf("newClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

var errNetwork = errors.New("network unreachable")

// fakeClientErr returns a Client on f, or the error opts give.
func fakeClientErr(f *fakeRedis, opts Options) (*Client, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	return newClient(f, opts, nil), nil
}

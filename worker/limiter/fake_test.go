package limiter

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeRedis is an in-memory backend with the limiter scripts' semantics,
// for driving the watchdog and the waits inside synctest bubbles, where
// time is fake and no network I/O may run. It is not an oracle of the
// scripts: TestBackendContract holds it to the scripts' answers on real
// Redis.
type fakeRedis struct {
	mu      sync.Mutex
	slots   map[string]map[string]time.Time // key -> holder -> lease deadline
	windows map[string][]fakeTake           // key -> takes, oldest first
	subs    map[string][]*fakeSub
	extends []extendCall

	// extendErr, when set, decides the outcome of an extend sent at the
	// given time: a non-nil error fails it before it runs.
	extendErr func(at time.Time) error
	// silent drops release messages: a release publishes nothing.
	silent bool
}

type fakeTake struct {
	at time.Time
	k  int
}

type fakeSub struct{ onMessage func() }

// extendCall is one extend as the fake saw it.
type extendCall struct {
	at     time.Time
	holder string
	lease  time.Duration
}

var _ backend = (*fakeRedis)(nil)

func newFakeRedis() *fakeRedis {
	return &fakeRedis{
		slots:   make(map[string]map[string]time.Time),
		windows: make(map[string][]fakeTake),
		subs:    make(map[string][]*fakeSub),
	}
}

var errFake = errors.New("fake: bad argument")

// live returns the live holders of key, dropping the expired. f.mu must
// be held.
func (f *fakeRedis) live(key string, now time.Time) map[string]time.Time {
	m := f.slots[key]
	if m == nil {
		m = make(map[string]time.Time)
		f.slots[key] = m
	}
	for h, d := range m {
		if !now.Before(d) {
			delete(m, h)
		}
	}
	return m
}

func (f *fakeRedis) acquire(ctx context.Context, key, holder string, max int, lease time.Duration) (reply, error) {
	if err := ctx.Err(); err != nil {
		return reply{}, err
	}
	if max < 1 || max > MaxLimit || lease < time.Millisecond || holder == "" {
		return reply{}, errFake
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.live(key, now)
	if _, again := m[holder]; !again && len(m) >= max {
		first := time.Time{}
		for _, d := range m {
			if first.IsZero() || d.Before(first) {
				first = d
			}
		}
		return reply{at: first, n: len(m)}, nil
	}
	m[holder] = now.Add(lease)
	return reply{ok: true, at: m[holder], n: len(m)}, nil
}

func (f *fakeRedis) extend(ctx context.Context, key, holder string, lease time.Duration) (bool, error) {
	now := time.Now()
	f.mu.Lock()
	f.extends = append(f.extends, extendCall{at: now, holder: holder, lease: lease})
	fail := f.extendErr
	f.mu.Unlock()
	if fail != nil {
		if err := fail(now); err != nil {
			return false, err
		}
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if lease < time.Millisecond || holder == "" {
		return false, errFake
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.live(key, now)
	if _, ok := m[holder]; !ok {
		return false, nil
	}
	m[holder] = now.Add(lease)
	return true, nil
}

func (f *fakeRedis) release(ctx context.Context, key, channel, holder string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if holder == "" || channel == "" {
		return false, errFake
	}
	f.mu.Lock()
	m := f.live(key, time.Now())
	if _, ok := m[holder]; !ok {
		f.mu.Unlock()
		return false, nil
	}
	delete(m, holder)
	var subs []*fakeSub
	if !f.silent {
		subs = slices.Clone(f.subs[channel])
	}
	f.mu.Unlock()
	for _, s := range subs {
		s.onMessage()
	}
	return true, nil
}

func (f *fakeRedis) take(ctx context.Context, key string, n int, per time.Duration, k int) (reply, error) {
	if err := ctx.Err(); err != nil {
		return reply{}, err
	}
	if n < 1 || n > MaxLimit || per < time.Millisecond || k < 1 || k > n {
		return reply{}, errFake
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	w := slices.DeleteFunc(f.windows[key], func(e fakeTake) bool { return !e.at.Add(per).After(now) })
	used := 0
	for _, e := range w {
		used += e.k
	}
	if used+k <= n {
		f.windows[key] = append(w, fakeTake{at: now, k: k})
		return reply{ok: true, at: now, n: n - used - k}, nil
	}
	f.windows[key] = w
	need, freed := used+k-n, 0
	for _, e := range w {
		if freed += e.k; freed >= need {
			return reply{at: e.at.Add(per), n: max(n-used, 0)}, nil
		}
	}
	panic("unreachable: k <= n")
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

// extendCalls returns the extends so far.
func (f *fakeRedis) extendCalls() []extendCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.extends)
}

// holds reports whether holder holds a live slot of key.
func (f *fakeRedis) holds(key, holder string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.live(key, time.Now())[holder]
	return ok
}

// drop deletes holder's slot of key behind the Limiter's back, as an
// operator's DEL would.
func (f *fakeRedis) drop(key, holder string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.slots[key], holder)
}

// set runs fn on f under its lock.
func (f *fakeRedis) set(fn func(f *fakeRedis)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// fakeLimiter returns a Limiter on f, closed at cleanup.
func fakeLimiter(t *testing.T, f *fakeRedis, id string) *Limiter {
	t.Helper()
	opts, err := Options{ID: id, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	l := newLimiter(f, opts)
	t.Cleanup(l.Close)
	return l
}

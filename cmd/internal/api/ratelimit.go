package api

import (
	"fmt"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// limiter is a token bucket per key: each holds up to N units and refills
// at N per Per, so a key may burst N and then keep to the rate. It limits
// two things: each token's requests (keys: token names) and each client
// address's failed authentications (keys: addresses, failures.go).
//
// Addresses are chosen by the client, so the table is bounded: a bucket
// that has refilled to full is the same as no bucket and is dropped, and
// at maxKeys buckets a new key evicts the one spent from longest ago.
// Dropping full buckets costs O(1) a call: the buckets are kept in the
// order of their last spend, and only the oldest ones are looked at.
type limiter[K comparable] struct {
	burst   float64
	rate    float64 // units per nanosecond
	maxKeys int

	mu      sync.RWMutex
	buckets map[K]*bucket[K]
	// oldest and newest end the list of buckets by last spend.
	oldest, newest *bucket[K]
}

// maxKeys is how many buckets a limiter holds at most. Under a flood from
// more addresses than this, the addresses that failed longest ago are
// forgotten first: they are the ones closest to a full bucket anyway. At
// about 100 bytes a bucket, the table stays near 1 MB.
const maxKeys = 10_000

type bucket[K comparable] struct {
	key        K
	level      float64 // units available at at
	at         time.Time
	prev, next *bucket[K] // toward oldest, toward newest
}

// validRate refuses a rate limit that cannot refill; option names the
// field in the error. The zero value (no limit) is valid.
func validRate(option string, r worker.RateLimit) error {
	if r != (worker.RateLimit{}) && (r.N < 1 || r.Per <= 0) {
		return fmt.Errorf("api: %s %s: want N >= 1 per a positive duration", option, r)
	}
	return nil
}

func newLimiter[K comparable](r worker.RateLimit, maxKeys int) *limiter[K] {
	return &limiter[K]{
		burst:   float64(r.N),
		rate:    float64(r.N) / float64(r.Per),
		maxKeys: maxKeys,
		buckets: map[K]*bucket[K]{},
	}
}

// take spends one unit of key's bucket at now. spent says whether there
// was one; wait is how long until the bucket holds one again: when spent,
// 0 unless that was the last unit; when not, how long to wait.
func (l *limiter[K]) take(key K, now time.Time) (spent bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropFull(now)
	b := l.buckets[key]
	level := l.levelAt(b, now)
	if level < 1 {
		return false, l.until(level)
	}
	if b == nil {
		if len(l.buckets) >= l.maxKeys {
			l.remove(l.oldest)
		}
		b = &bucket[K]{key: key, at: now}
		l.buckets[key] = b
	} else {
		l.unlink(b)
	}
	l.push(b)
	b.level = level - 1
	// A clock that steps back must not refill the bucket twice.
	if now.After(b.at) {
		b.at = now
	}
	return true, l.until(b.level)
}

// wait is how long until key's bucket holds a unit at now; 0 if it holds
// one. It spends nothing.
func (l *limiter[K]) wait(key K, now time.Time) time.Duration {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.until(l.levelAt(l.buckets[key], now))
}

// levelAt is b's level refilled up to now; a full bucket for none.
func (l *limiter[K]) levelAt(b *bucket[K], now time.Time) float64 {
	if b == nil {
		return l.burst
	}
	level := b.level
	if elapsed := now.Sub(b.at); elapsed > 0 {
		level = min(l.burst, level+float64(elapsed)*l.rate)
	}
	return level
}

// until is how long a bucket at level takes to hold one unit.
func (l *limiter[K]) until(level float64) time.Duration {
	if level >= 1 {
		return 0
	}
	return max(time.Duration((1-level)/l.rate), time.Nanosecond)
}

// dropFull removes the oldest buckets as long as they have refilled.
func (l *limiter[K]) dropFull(now time.Time) {
	for l.oldest != nil && l.levelAt(l.oldest, now) >= l.burst {
		l.remove(l.oldest)
	}
}

func (l *limiter[K]) remove(b *bucket[K]) {
	l.unlink(b)
	delete(l.buckets, b.key)
}

// push appends b at the newest end of the list.
func (l *limiter[K]) push(b *bucket[K]) {
	b.prev, b.next = l.newest, nil
	if l.newest != nil {
		l.newest.next = b
	} else {
		l.oldest = b
	}
	l.newest = b
}

func (l *limiter[K]) unlink(b *bucket[K]) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		l.oldest = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	} else {
		l.newest = b.prev
	}
	b.prev, b.next = nil, nil
}

package api

import (
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// limiter is a token bucket per key (token name): each holds up to N
// requests and refills at N per Per, so a client may burst N requests and
// then keep to the rate. The keys are the configured token names, so the
// map stays small.
type limiter struct {
	burst float64
	rate  float64 // requests per nanosecond

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	level float64 // requests available
	at    time.Time
}

func newLimiter(r worker.RateLimit) *limiter {
	return &limiter{
		burst:   float64(r.N),
		rate:    float64(r.N) / float64(r.Per),
		buckets: map[string]*bucket{},
	}
}

// take spends one request of key's bucket at now. It returns 0 when the
// request may go, else how long until one is available (nothing spent).
func (l *limiter) take(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		b = &bucket{level: l.burst, at: now}
		l.buckets[key] = b
	}
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.level = min(l.burst, b.level+float64(elapsed)*l.rate)
		b.at = now
	}
	if b.level >= 1 {
		b.level--
		return 0
	}
	return max(time.Duration((1-b.level)/l.rate), time.Nanosecond)
}

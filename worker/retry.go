package worker

import (
	"math/rand/v2"
	"time"
)

// RetryPolicy decides how long a failed job waits before its next attempt.
type RetryPolicy interface {
	// Delay returns the wait after failed attempt number attempt (1-based).
	Delay(attempt int) time.Duration
}

// Defaults of ExponentialBackoff.
const (
	BackoffBaseDefault = 5 * time.Second
	BackoffCapDefault  = 6 * time.Hour
)

// ExponentialBackoff waits a random time between zero and
// min(Cap, Base·2^(attempt-1)) ("full jitter"), which spreads retries of jobs
// that failed together. It is the default policy.
type ExponentialBackoff struct {
	Base time.Duration // default 5s
	Cap  time.Duration // default 6h
	// Rand returns a number in [0, 1); nil uses math/rand/v2. Tests inject it.
	Rand func() float64
}

// Delay implements RetryPolicy.
func (b ExponentialBackoff) Delay(attempt int) time.Duration {
	base, limit := b.Base, b.Cap
	if base <= 0 {
		base = BackoffBaseDefault
	}
	if limit <= 0 {
		limit = BackoffCapDefault
	}
	ceiling := min(base, limit)
	for i := 1; i < attempt && ceiling < limit; i++ {
		if ceiling > limit/2 {
			ceiling = limit // doubling would pass the cap, or overflow
			break
		}
		ceiling *= 2
	}
	rnd := b.Rand
	if rnd == nil {
		rnd = rand.Float64
	}
	f := min(max(rnd(), 0), 1)
	return time.Duration(f * float64(ceiling))
}

// FixedSteps waits Steps[attempt-1]; past the end the last step repeats.
// For example 15s 3m 10m 30m 1h 2h 6h 15h.
type FixedSteps []time.Duration

// Delay implements RetryPolicy. An empty FixedSteps retries at once.
func (s FixedSteps) Delay(attempt int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	return s[min(max(attempt, 1), len(s))-1]
}

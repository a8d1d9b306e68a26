package worker

import (
	"math"
	"testing"
	"time"
)

// stubRandAt returns a Rand for ExponentialBackoff that always returns v.
func stubRandAt(v float64) func() float64 { return func() float64 { return v } }

// wantBackoffCeiling is min(limit, base·2^(attempt-1)), computed without overflow.
func wantBackoffCeiling(base, limit time.Duration, attempt int) time.Duration {
	c := base
	for i := 1; i < attempt; i++ {
		if c > limit/2 {
			return limit
		}
		c *= 2
	}
	return min(c, limit)
}

func TestExponentialBackoffNearlyOneApproachesCeiling(t *testing.T) {
	t.Parallel()
	const r = 0.999999
	tests := []struct {
		name    string
		policy  ExponentialBackoff
		attempt int
		ceiling time.Duration
	}{
		{"defaults attempt 1", ExponentialBackoff{}, 1, 5 * time.Second},
		{"defaults attempt 2", ExponentialBackoff{}, 2, 10 * time.Second},
		{"defaults attempt 3", ExponentialBackoff{}, 3, 20 * time.Second},
		{"defaults attempt 13", ExponentialBackoff{}, 13, 5 * time.Second << 12},
		{"defaults attempt 14 capped", ExponentialBackoff{}, 14, 6 * time.Hour},
		{"defaults attempt 25 capped", ExponentialBackoff{}, 25, 6 * time.Hour},
		{"attempt 0 uses base", ExponentialBackoff{}, 0, 5 * time.Second},
		{"negative attempt uses base", ExponentialBackoff{}, -3, 5 * time.Second},
		{"custom base", ExponentialBackoff{Base: time.Second, Cap: 10 * time.Second}, 4, 8 * time.Second},
		{"custom cap", ExponentialBackoff{Base: time.Second, Cap: 10 * time.Second}, 5, 10 * time.Second},
		{"base above cap", ExponentialBackoff{Base: time.Hour, Cap: time.Minute}, 1, time.Minute},
		{"negative base and cap mean defaults", ExponentialBackoff{Base: -time.Second, Cap: -time.Second}, 2, 10 * time.Second},
		{"attempt 1000", ExponentialBackoff{}, 1000, 6 * time.Hour},
		{"attempt MaxInt32", ExponentialBackoff{}, math.MaxInt32, 6 * time.Hour},
		{"attempt MaxInt", ExponentialBackoff{}, math.MaxInt, 6 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.policy
			p.Rand = stubRandAt(r)
			got := p.Delay(tt.attempt)
			if got >= tt.ceiling {
				t.Fatalf("Delay(%d) = %s; want below the ceiling %s", tt.attempt, got, tt.ceiling)
			}
			if lo := time.Duration(float64(tt.ceiling) * 0.99999); got < lo {
				t.Fatalf("Delay(%d) = %s; want close to the ceiling %s (at least %s)", tt.attempt, got, tt.ceiling, lo)
			}
		})
	}
}

func TestExponentialBackoffZeroRandIsZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		policy  ExponentialBackoff
		attempt int
	}{
		{"defaults attempt 1", ExponentialBackoff{}, 1},
		{"defaults attempt 10", ExponentialBackoff{}, 10},
		{"defaults attempt MaxInt32", ExponentialBackoff{}, math.MaxInt32},
		{"custom", ExponentialBackoff{Base: time.Millisecond, Cap: time.Second}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.policy
			p.Rand = stubRandAt(0)
			if got := p.Delay(tt.attempt); got != 0 {
				t.Fatalf("Delay(%d) = %s; want 0", tt.attempt, got)
			}
		})
	}
}

func TestExponentialBackoffHalfRandIsHalfCeiling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		policy  ExponentialBackoff
		attempt int
		want    time.Duration
	}{
		{"defaults attempt 1", ExponentialBackoff{}, 1, 2500 * time.Millisecond},
		{"defaults attempt 4", ExponentialBackoff{}, 4, 20 * time.Second},
		{"defaults capped", ExponentialBackoff{}, 100, 3 * time.Hour},
		{"custom", ExponentialBackoff{Base: 100 * time.Millisecond, Cap: time.Minute}, 3, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.policy
			p.Rand = stubRandAt(0.5)
			if got := p.Delay(tt.attempt); got != tt.want {
				t.Fatalf("Delay(%d) = %s; want %s", tt.attempt, got, tt.want)
			}
		})
	}
}

// TestExponentialBackoffHugeCapDoesNotOverflow shows that the doubling in
// ExponentialBackoff.Delay overflows int64 when Cap is above ~146 years
// (MaxInt64/2 ns), e.g. a user writing Cap: math.MaxInt64 for "no cap": the
// ceiling wraps negative and the delay becomes negative (retry at once).
func TestExponentialBackoffHugeCapDoesNotOverflow(t *testing.T) {
	t.Parallel()
	const maxDuration = time.Duration(math.MaxInt64)
	tests := []struct {
		name    string
		policy  ExponentialBackoff
		attempt int
	}{
		{"default base, no cap, attempt 32", ExponentialBackoff{Cap: maxDuration}, 32},
		{"default base, no cap, attempt 40", ExponentialBackoff{Cap: maxDuration}, 40},
		{"default base, no cap, attempt 1000", ExponentialBackoff{Cap: maxDuration}, 1000},
		{"huge base, no cap, attempt 2", ExponentialBackoff{Base: maxDuration/2 + 1, Cap: maxDuration}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.policy
			p.Rand = stubRandAt(0.5)
			base := p.Base
			if base == 0 {
				base = BackoffBaseDefault
			}
			want := time.Duration(0.5 * float64(wantBackoffCeiling(base, p.Cap, tt.attempt)))
			if got := p.Delay(tt.attempt); got != want {
				t.Fatalf("Delay(%d) = %s (%d ns); want %s: the ceiling overflowed", tt.attempt, got, int64(got), want)
			}
		})
	}
}

func TestExponentialBackoffWithinCeiling(t *testing.T) {
	t.Parallel()
	rands := []float64{0, 1e-9, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999999, math.Nextafter(1, 0)}
	policies := []struct {
		name   string
		policy ExponentialBackoff
	}{
		{"defaults", ExponentialBackoff{}},
		{"ms base, s cap", ExponentialBackoff{Base: time.Millisecond, Cap: time.Second}},
		{"1ns base", ExponentialBackoff{Base: 1, Cap: time.Hour}},
		{"base equals cap", ExponentialBackoff{Base: time.Minute, Cap: time.Minute}},
	}
	for _, pc := range policies {
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			base, limit := pc.policy.Base, pc.policy.Cap
			if base == 0 {
				base = BackoffBaseDefault
			}
			if limit == 0 {
				limit = BackoffCapDefault
			}
			attempts := []int{math.MinInt32, -1, 0, math.MaxInt32}
			for a := 1; a <= 200; a++ {
				attempts = append(attempts, a)
			}
			for _, attempt := range attempts {
				ceiling := wantBackoffCeiling(base, limit, attempt)
				for _, r := range rands {
					p := pc.policy
					p.Rand = stubRandAt(r)
					d := p.Delay(attempt)
					if d < 0 || d >= ceiling && ceiling > 0 {
						t.Fatalf("Delay(%d) with rand %v = %s; want in [0, %s)", attempt, r, d, ceiling)
					}
				}
				// The default source must keep the same bounds.
				if d := pc.policy.Delay(attempt); d < 0 || d >= ceiling {
					t.Fatalf("Delay(%d) with math/rand = %s; want in [0, %s)", attempt, d, ceiling)
				}
			}
		})
	}
}

func TestFixedStepsDelay(t *testing.T) {
	t.Parallel()
	steps := FixedSteps{
		15 * time.Second, 3 * time.Minute, 10 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 6 * time.Hour, 15 * time.Hour,
	}
	tests := []struct {
		name    string
		steps   FixedSteps
		attempt int
		want    time.Duration
	}{
		{"attempt 1", steps, 1, 15 * time.Second},
		{"attempt 2", steps, 2, 3 * time.Minute},
		{"attempt 3", steps, 3, 10 * time.Minute},
		{"attempt 4", steps, 4, 30 * time.Minute},
		{"attempt 5", steps, 5, time.Hour},
		{"attempt 6", steps, 6, 2 * time.Hour},
		{"attempt 7", steps, 7, 6 * time.Hour},
		{"attempt 8 last step", steps, 8, 15 * time.Hour},
		{"attempt 9 repeats last", steps, 9, 15 * time.Hour},
		{"attempt 100 repeats last", steps, 100, 15 * time.Hour},
		{"attempt MaxInt repeats last", steps, math.MaxInt, 15 * time.Hour},
		{"attempt 0 first step", steps, 0, 15 * time.Second},
		{"negative attempt first step", steps, -5, 15 * time.Second},
		{"MinInt attempt first step", steps, math.MinInt, 15 * time.Second},
		{"one step", FixedSteps{time.Minute}, 3, time.Minute},
		{"empty", FixedSteps{}, 1, 0},
		{"nil", nil, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.steps.Delay(tt.attempt); got != tt.want {
				t.Fatalf("Delay(%d) = %s; want %s", tt.attempt, got, tt.want)
			}
		})
	}
}

func TestRetryPoliciesImplementRetryPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy RetryPolicy
	}{
		{"ExponentialBackoff", ExponentialBackoff{Rand: stubRandAt(0)}},
		{"FixedSteps", FixedSteps{time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if d := tt.policy.Delay(1); d < 0 {
				t.Fatalf("Delay(1) = %s; want >= 0", d)
			}
		})
	}
}

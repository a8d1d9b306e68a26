package metrics

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/rueidis"
)

// TestRedisRecordsByName records a known sequence and checks what was
// timed and what counted as a failure.
func TestRedisRecordsByName(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	r, err := NewRedis(reg)
	if err != nil {
		t.Fatal(err)
	}
	r.Touch("claim", "ack")
	r.Script("claim", time.Millisecond, nil)
	r.Script("claim", time.Millisecond, errors.New("connection reset"))
	r.Script("ack", time.Millisecond, context.Canceled)                          // the caller's decision
	r.Script("ack", time.Millisecond, fmt.Errorf("ack q: %w", context.Canceled)) // wrapped, too
	r.Failed("get", rueidis.Nil)                                                 // an answer
	r.Failed("ping", errors.New("i/o timeout"))
	r.Failed("sadd", nil)

	for op, want := range map[string]float64{"claim": 1, "ack": 0, "get": 0, "ping": 1, "sadd": 0} {
		if got := testutil.ToFloat64(r.errors.WithLabelValues(op)); got != want {
			t.Errorf(`courier_redis_errors_total{op=%q} = %v, want %v`, op, got, want)
		}
	}
	if n := testutil.CollectAndCount(r.script); n != 2 {
		t.Errorf("%d script series, want 2 (claim, ack: touched, then timed)", n)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("GatherAndLint: %v %+v", err, problems)
	}
	// Refusals count by op and reason; an empty reason is no refusal.
	r.Refused("enqueue", RefusedOOM)
	r.Refused("claim", RefusedTryAgain)
	r.Refused("claim", RefusedTryAgain)
	r.Refused("ack", "")
	for _, tc := range []struct {
		op, reason string
		want       float64
	}{{"enqueue", RefusedOOM, 1}, {"claim", RefusedTryAgain, 2}, {"claim", RefusedOOM, 0}, {"ack", RefusedOOM, 0}} {
		if got := testutil.ToFloat64(r.refused.WithLabelValues(tc.op, tc.reason)); got != tc.want {
			t.Errorf(`courier_redis_refused_total{op=%q,reason=%q} = %v, want %v`, tc.op, tc.reason, got, tc.want)
		}
	}
	// Touched scripts have their oom series from the start; nothing else
	// was created at zero.
	if n := testutil.CollectAndCount(r.refused); n != 4 {
		t.Errorf("%d refused series, want 4 (claim and ack at oom, enqueue at oom, claim at tryagain)", n)
	}
	var nilRedis *Redis
	nilRedis.Refused("claim", RefusedOOM)
	nilRedis.Touch("claim") // must not panic
	nilRedis.Script("claim", time.Second, errors.New("x"))
	nilRedis.Failed("ping", errors.New("x"))
}

func TestRegistrationIsSharedOrUndone(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	a, err := NewLock(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLock(reg)
	if err != nil {
		t.Fatalf("second NewLock on the same registry: %v", err)
	}
	a.Contended("l")
	b.Contended("l")
	if v := testutil.ToFloat64(a.contention.WithLabelValues("l")); v != 2 {
		t.Errorf("contention = %v, want 2: the second Lock does not share the first's series", v)
	}

	// A collector of another kind under one of the names is a conflict:
	// nothing registered by the failed call stays.
	other := prometheus.NewRegistry()
	other.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "courier_lock_renewals_total", Help: "not a counter"}))
	if _, err := NewLock(other); err == nil {
		t.Error("NewLock succeeded on a registry with a conflicting collector")
	}
	if n := testutil.CollectAndCount(other, "courier_lock_acquire_seconds", "courier_lock_contention_total"); n != 0 {
		t.Errorf("%d lock series left registered after the failed NewLock", n)
	}
	if _, err := NewLock(nil); err == nil {
		t.Error("NewLock(nil) succeeded")
	}
	if _, err := NewRedis(nil); err == nil {
		t.Error("NewRedis(nil) succeeded")
	}
}

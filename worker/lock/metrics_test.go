package lock_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

func TestMetricsAfterKnownSequence(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	reg := prometheus.NewRegistry()
	const lease = 300 * time.Millisecond
	c := newClient(t, rdb, lock.Options{Lease: lease, Registerer: reg, MetricLabel: func(string) string { return "job" }})
	name := testkit.Prefix(t)
	job := []string{"lock", "job"}

	h := acquire(t, c, name, "a", lock.AcquireOptions{}) // acquired: 1
	if _, err := c.Acquire(t.Context(), name, "b", lock.AcquireOptions{}); !isNotAcquired(err) {
		t.Fatalf("second holder: %v, want ErrNotAcquired", err) // contended: 1
	}
	release(t, h)
	h = acquire(t, c, name, "b", lock.AcquireOptions{}) // acquired: 2
	renewedOK := func() float64 {
		return testkit.Metric(t, reg, "courier_lock_renewals_total", "lock", "job", "result", "ok")
	}
	testkit.Eventually(t, 5*time.Second, "a renewal", func() bool { return renewedOK() >= 1 })
	start := time.Now()
	testkit.Del(t, rdb, name)
	if _, cause := ended(t, h, start, 5*time.Second); !errors.Is(cause, lock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", cause) // lost: 1
	}

	for _, tc := range []struct {
		metric string
		labels []string
		want   float64
	}{
		{"courier_lock_acquire_seconds", job, 2}, // sample count
		{"courier_lock_contention_total", job, 1},
		{"courier_lock_renewals_total", []string{"lock", "job", "result", "lost"}, 1},
		{"courier_lock_renewals_total", []string{"lock", "job", "result", "error"}, 0},
	} {
		if got := testkit.Metric(t, reg, tc.metric, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.metric, tc.labels, got, tc.want)
		}
	}
	lintClean(t, reg)
}

// lintClean fails t on any promlint problem in reg's metrics: what
// testutil.GatherAndLint does (testutil itself needs a module this
// repository's go.sum does not list).
func lintClean(t *testing.T, reg prometheus.Gatherer) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(families).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestClientsShareTheirRegisterer runs two Clients on one Registerer: their
// series are shared, and lock scripts are timed by name. A Registerer that
// holds a conflicting collector refuses the Client.
func TestClientsShareTheirRegisterer(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	rdb := testkit.Single(t)
	name := testkit.Prefix(t) + ":shared"
	for i := range 2 {
		c, err := lock.NewClient(rdb, lock.Options{Registerer: reg, MetricLabel: func(string) string { return "shared" }})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Acquire(t.Context(), name+strconv.Itoa(i), "h", lock.AcquireOptions{Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		metric string
		labels []string
		want   float64
	}{
		{"courier_lock_acquire_seconds", []string{"lock", "shared"}, 2},
		{"courier_redis_script_seconds", []string{"script", "lock_acquire"}, 2},
		{"courier_redis_script_seconds", []string{"script", "lock_release"}, 0},
		{"courier_redis_errors_total", []string{"op", "lock_acquire"}, 0},
	} {
		if got := testkit.Metric(t, reg, tc.metric, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.metric, tc.labels, got, tc.want)
		}
	}
	lintClean(t, reg)

	other := prometheus.NewRegistry()
	other.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "courier_lock_renewals_total", Help: "not a counter"}))
	if c, err := lock.NewClient(rdb, lock.Options{Registerer: other}); err == nil {
		c.Close()
		t.Error("NewClient succeeded on a registry with a conflicting collector")
	}
	if n := testutil.CollectAndCount(other, "courier_lock_acquire_seconds", "courier_lock_contention_total"); n != 0 {
		t.Errorf("%d lock series left registered after the failed NewClient", n)
	}
}

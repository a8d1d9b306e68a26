package lock

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics records what Clients do with locks, labelled by lock (see
// Options.MetricLabel). One Metrics can serve several Clients. A nil
// *Metrics records nothing.
type Metrics struct {
	acquire    *prometheus.HistogramVec
	contention *prometheus.CounterVec
	renewals   *prometheus.CounterVec
}

// acquireBuckets span 100µs (an uncontended acquire on a nearby Redis) to
// 30s (a waiter that outlasted a whole watchdog lease).
var acquireBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// NewMetrics creates the lock metrics and registers them with reg:
//
//   - courier_lock_acquire_seconds (histogram, lock): time to acquire,
//     waiting included, of every successful Acquire.
//   - courier_lock_contention_total (counter, lock): acquire attempts that
//     found the lock held by another holder.
//   - courier_lock_renewals_total (counter, lock, result = ok / lost /
//     error): watchdog renewals; lost means the lock was gone, error that
//     no answer came.
//
// Calling NewMetrics again with the same reg shares the series of the first.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, fmt.Errorf("lock metrics: nil Registerer")
	}
	m := &Metrics{
		acquire: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "courier_lock_acquire_seconds",
			Help:    "Time to acquire a lock, waiting included.",
			Buckets: acquireBuckets,
		}, []string{"lock"}),
		contention: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_lock_contention_total",
			Help: "Lock acquire attempts that found the lock held by another holder.",
		}, []string{"lock"}),
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_lock_renewals_total",
			Help: "Watchdog lock lease renewals by result: ok, lost (the lock was gone), error (no answer).",
		}, []string{"lock", "result"}),
	}
	// An earlier NewMetrics on the same registry registered them: share
	// its collectors.
	var done []prometheus.Collector
	for _, f := range []struct {
		c     prometheus.Collector
		share func(existing prometheus.Collector) bool
	}{
		{m.acquire, func(e prometheus.Collector) (ok bool) { m.acquire, ok = e.(*prometheus.HistogramVec); return ok }},
		{m.contention, func(e prometheus.Collector) (ok bool) { m.contention, ok = e.(*prometheus.CounterVec); return ok }},
		{m.renewals, func(e prometheus.Collector) (ok bool) { m.renewals, ok = e.(*prometheus.CounterVec); return ok }},
	} {
		err := reg.Register(f.c)
		var are prometheus.AlreadyRegisteredError
		switch {
		case err == nil:
			done = append(done, f.c)
		case errors.As(err, &are) && f.share(are.ExistingCollector):
			err = nil
		}
		if err != nil {
			for _, d := range done {
				reg.Unregister(d)
			}
			return nil, fmt.Errorf("register lock metrics: %w", err)
		}
	}
	return m, nil
}

// touch creates a lock's series at zero, so rates and alerts see them
// before the first event.
func (m *Metrics) touch(label string) {
	if m == nil {
		return
	}
	m.acquire.WithLabelValues(label)
	m.contention.WithLabelValues(label)
	for _, r := range []string{"ok", "lost", "error"} {
		m.renewals.WithLabelValues(label, r)
	}
}

func (m *Metrics) acquired(label string, start time.Time) {
	if m != nil {
		m.acquire.WithLabelValues(label).Observe(time.Since(start).Seconds())
	}
}

func (m *Metrics) contended(label string) {
	if m != nil {
		m.contention.WithLabelValues(label).Inc()
	}
}

func (m *Metrics) renewal(label, result string) {
	if m != nil {
		m.renewals.WithLabelValues(label, result).Inc()
	}
}

package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Lock records what lock clients (package worker/lock) do, labelled by
// lock. A nil *Lock records nothing.
type Lock struct {
	acquire    *prometheus.HistogramVec
	contention *prometheus.CounterVec
	renewals   *prometheus.CounterVec
}

// RenewalResults lists the values of courier_lock_renewals_total's result
// label: ok, lost (the lock was gone), error (no answer).
var RenewalResults = []string{"ok", "lost", "error"}

// NewLock registers the lock metrics on reg, sharing them when an earlier
// call registered them there:
//
//   - courier_lock_acquire_seconds (histogram, lock): time to acquire,
//     waiting included, of every successful acquire.
//   - courier_lock_contention_total (counter, lock): acquire attempts that
//     found the lock held by another holder.
//   - courier_lock_renewals_total (counter, lock, result): watchdog renewals.
func NewLock(reg prometheus.Registerer) (*Lock, error) {
	m := &Lock{
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
	if err := register(reg, "lock", share(&m.acquire), share(&m.contention), share(&m.renewals)); err != nil {
		return nil, err
	}
	return m, nil
}

// Touch creates a lock's series at zero, so rates and alerts see them
// before the first event.
func (m *Lock) Touch(label string) {
	if m == nil {
		return
	}
	m.acquire.WithLabelValues(label)
	m.contention.WithLabelValues(label)
	for _, r := range RenewalResults {
		m.renewals.WithLabelValues(label, r)
	}
}

// Acquired records an acquire of the lock that started at start.
func (m *Lock) Acquired(label string, start time.Time) {
	if m != nil {
		m.acquire.WithLabelValues(label).Observe(time.Since(start).Seconds())
	}
}

// Contended counts an acquire attempt that found the lock held.
func (m *Lock) Contended(label string) {
	if m != nil {
		m.contention.WithLabelValues(label).Inc()
	}
}

// Renewal counts a watchdog renewal with result ok, lost or error.
func (m *Lock) Renewal(label, result string) {
	if m != nil {
		m.renewals.WithLabelValues(label, result).Inc()
	}
}

// Package metrics defines the daemon's Prometheus metrics (DESIGN.md,
// "Metrics": the names are an interface that dashboards and alerts use) and
// registers them on the registerer the program passes in.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// Set is the daemon's metrics. A nil *Set records nothing.
type Set struct {
	leader    *prometheus.GaugeVec
	queueJobs *prometheus.GaugeVec
	jobs      *jobMetrics
	redis     *redisMetrics
	// Lock is handed to the lock client of the leader elections.
	Lock *lock.Metrics
}

// New registers the metrics on reg; nil reg gives a nil Set. Metrics already
// registered (a second daemon in the process) are shared.
func New(reg prometheus.Registerer) (*Set, error) {
	if reg == nil {
		return nil, nil
	}
	s := &Set{
		leader: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_leader",
			Help: "1 while this process leads the queue (holds its leader lock and runs its carrier duties), else 0.",
		}, []string{"queue"}),
		queueJobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_queue_jobs",
			Help: "Jobs of the queue by state, sampled by the queue's leader: scheduled (due later), ready (due now), active (running), dead.",
		}, []string{"queue", "state"}),
		jobs:  newJobMetrics(),
		redis: newRedisMetrics(),
	}
	j, r := s.jobs, s.redis
	for _, err := range []error{
		registerAs(reg, &s.leader), registerAs(reg, &s.queueJobs),
		registerAs(reg, &j.enqueued), registerAs(reg, &j.processed),
		registerAs(reg, &j.duration), registerAs(reg, &j.lag),
		registerAs(reg, &j.running), registerAs(reg, &j.concurrency),
		registerAs(reg, &r.script), registerAs(reg, &r.errors),
	} {
		if err != nil {
			return nil, err
		}
	}
	r.touch()
	var err error
	if s.Lock, err = lock.NewMetrics(reg); err != nil {
		return nil, err
	}
	return s, nil
}

// registerAs registers *c on reg; if an equal collector is registered
// already, *c becomes that one, so two Sets on one registry share series.
func registerAs[C prometheus.Collector](reg prometheus.Registerer, c *C) error {
	if err := reg.Register(*c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				*c = existing
				return nil
			}
		}
		return err
	}
	return nil
}

// Leader records whether this process leads queue.
func (s *Set) Leader(queue string, leading bool) {
	if s == nil {
		return
	}
	v := 0.0
	if leading {
		v = 1
	} else {
		// Only the leader reports the queue's sizes; a former leader's last
		// sample would be stale.
		s.queueJobs.DeletePartialMatch(prometheus.Labels{"queue": queue})
	}
	s.leader.WithLabelValues(queue).Set(v)
}

// QueueJobs records a leader's sample of a queue's sizes.
func (s *Set) QueueJobs(queue string, st store.Stats) {
	if s == nil {
		return
	}
	s.queueJobs.WithLabelValues(queue, "scheduled").Set(float64(st.Scheduled))
	s.queueJobs.WithLabelValues(queue, "ready").Set(float64(st.Ready))
	s.queueJobs.WithLabelValues(queue, "active").Set(float64(st.Active))
	s.queueJobs.WithLabelValues(queue, "dead").Set(float64(st.Dead))
}

// LockLabel is the value of the lock label for a leader lock of queue.
func LockLabel(queue string) string { return queue + ":leader" }

// Package metrics defines every Prometheus metric of Courier (DESIGN.md,
// "Metrics": the names are an interface that dashboards and alerts use):
// the job, queue and leader metrics of a Daemon (Set), the Redis metrics of
// the script layer (Redis) and the lock metrics (Lock). Each registers on
// the registerer the program passes in, sharing series with an earlier
// registration on the same registry. It imports no other package of
// Courier: the engine's packages hand it names and numbers.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Set is a Daemon's or a Client's metrics. A nil *Set records nothing.
type Set struct {
	leader      *prometheus.GaugeVec
	queueJobs   *prometheus.GaugeVec
	queuePaused *prometheus.GaugeVec
	readyLevels *prometheus.GaugeVec
	jobs        *jobMetrics
	kinds       *kindMetrics
	redis       *Redis
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
			Help: "Jobs of the queue by state, sampled by the queue's leader: scheduled (due later), ready (due now), active (running), dead, completed (finished and retained).",
		}, []string{"queue", "state"}),
		queuePaused: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_queue_paused",
			Help: "1 while the queue is paused (no process claims its jobs), else 0; sampled by the queue's leader.",
		}, []string{"queue"}),
		readyLevels: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_queue_ready_priority",
			Help: "Ready jobs (due now) of the queue by priority level: high, normal, low; sampled by the queue's leader.",
		}, []string{"queue", "priority"}),
		jobs:  newJobMetrics(),
		kinds: newKindMetrics(),
	}
	j := s.jobs
	if err := register(reg, "job",
		share(&s.leader), share(&s.queueJobs), share(&s.queuePaused), share(&s.readyLevels),
		share(&j.enqueued), share(&j.duplicates), share(&j.processed), share(&j.duration), share(&j.lag),
		share(&j.running), share(&j.concurrency), share(&j.replication), share(&j.unreplicated),
		share(&s.kinds.processed), share(&s.kinds.duration),
	); err != nil {
		return nil, err
	}
	var err error
	if s.redis, err = NewRedis(reg); err != nil {
		return nil, err
	}
	return s, nil
}

// Redis returns the Redis metrics of the set; nil for a nil Set.
func (s *Set) Redis() *Redis {
	if s == nil {
		return nil
	}
	return s.redis
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
		// Only the leader reports the queue's sizes and pause; a former
		// leader's last sample would be stale.
		s.queueJobs.DeletePartialMatch(prometheus.Labels{"queue": queue})
		s.queuePaused.DeleteLabelValues(queue)
		s.readyLevels.DeletePartialMatch(prometheus.Labels{"queue": queue})
	}
	s.leader.WithLabelValues(queue).Set(v)
}

// QueueSizes is a leader's sample of a queue's jobs by state; ReadyHigh
// and ReadyLow are the ready jobs of the high and low priority levels
// (the rest of Ready are normal).
type QueueSizes struct {
	Scheduled, Ready, Active, Dead, Completed int64
	ReadyHigh, ReadyLow                       int64
}

// QueueJobs records a leader's sample of a queue's sizes.
func (s *Set) QueueJobs(queue string, q QueueSizes) {
	if s == nil {
		return
	}
	s.queueJobs.WithLabelValues(queue, "scheduled").Set(float64(q.Scheduled))
	s.queueJobs.WithLabelValues(queue, "ready").Set(float64(q.Ready))
	s.queueJobs.WithLabelValues(queue, "active").Set(float64(q.Active))
	s.queueJobs.WithLabelValues(queue, "dead").Set(float64(q.Dead))
	s.queueJobs.WithLabelValues(queue, "completed").Set(float64(q.Completed))
	s.readyLevels.WithLabelValues(queue, "high").Set(float64(q.ReadyHigh))
	s.readyLevels.WithLabelValues(queue, "normal").Set(float64(q.Ready - q.ReadyHigh - q.ReadyLow))
	s.readyLevels.WithLabelValues(queue, "low").Set(float64(q.ReadyLow))
}

// QueuePaused records a leader's sample of whether queue is paused.
func (s *Set) QueuePaused(queue string, paused bool) {
	if s == nil {
		return
	}
	v := 0.0
	if paused {
		v = 1
	}
	s.queuePaused.WithLabelValues(queue).Set(v)
}

// LockLabel is the value of the lock label for a leader lock of queue.
func LockLabel(queue string) string { return queue + ":leader" }

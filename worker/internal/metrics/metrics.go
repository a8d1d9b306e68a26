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
	queueKeys   *prometheus.GaugeVec
	keyJobs     *prometheus.GaugeVec
	keyAtCap    *prometheus.GaugeVec
	keyLimited  *prometheus.GaugeVec
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
		queueKeys: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_queue_keys",
			Help: "Job keys of the queue that have waiting jobs (worker.JobSpec.Key); sampled by the queue's leader.",
		}, []string{"queue"}),
		keyJobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_key_jobs",
			Help: "Jobs of a job key by state: ready (due now), scheduled (due later) or running, for the queue's keys with the most waiting jobs (at most 10 keys a queue, so the series stay bounded); sampled by the queue's leader.",
		}, []string{"queue", "key", "state"}),
		keyAtCap: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_key_at_cap",
			Help: "1 while a job key runs at its concurrency cap with jobs waiting, else 0; for the keys of courier_key_jobs.",
		}, []string{"queue", "key"}),
		keyLimited: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_key_limited",
			Help: "1 while a job key is held back by a handler's worker.KeyLimited (a downstream's 429 or 503), else 0; for the keys of courier_key_jobs.",
		}, []string{"queue", "key"}),
		jobs:  newJobMetrics(),
		kinds: newKindMetrics(),
	}
	j := s.jobs
	if err := register(reg, "job",
		share(&s.leader), share(&s.queueJobs), share(&s.queuePaused), share(&s.readyLevels),
		share(&s.queueKeys), share(&s.keyJobs), share(&s.keyAtCap), share(&s.keyLimited),
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
		s.dropKeys(queue)
		s.queueKeys.DeleteLabelValues(queue)
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

// KeySample is one key of a leader's sample of a queue's keys.
type KeySample struct {
	Key                       string
	Ready, Scheduled, Running int64
	AtCap, Limited            bool
}

// QueueKeyCount records a leader's sample of how many job keys of a queue
// have waiting jobs (0 while it has none: the series exists for every
// queue a leader samples).
func (s *Set) QueueKeyCount(queue string, keys int64) {
	if s == nil {
		return
	}
	s.queueKeys.WithLabelValues(queue).Set(float64(keys))
}

// QueueKeys records a leader's sample of the job keys of a queue with the
// most waiting jobs (at most 10 are kept; the series of keys that left
// the top go).
func (s *Set) QueueKeys(queue string, top []KeySample) {
	if s == nil {
		return
	}
	s.dropKeys(queue)
	for _, k := range top[:min(len(top), 10)] {
		s.keyJobs.WithLabelValues(queue, k.Key, "ready").Set(float64(k.Ready))
		s.keyJobs.WithLabelValues(queue, k.Key, "scheduled").Set(float64(k.Scheduled))
		s.keyJobs.WithLabelValues(queue, k.Key, "running").Set(float64(k.Running))
		s.keyAtCap.WithLabelValues(queue, k.Key).Set(b2f(k.AtCap))
		s.keyLimited.WithLabelValues(queue, k.Key).Set(b2f(k.Limited))
	}
}

func (s *Set) dropKeys(queue string) {
	q := prometheus.Labels{"queue": queue}
	s.keyJobs.DeletePartialMatch(q)
	s.keyAtCap.DeletePartialMatch(q)
	s.keyLimited.DeletePartialMatch(q)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
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

package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bucket bounds, in seconds, chosen for each histogram's range.
var (
	// lagBuckets: 1 ms (a ready job claimed at once) to 1 h (a backlog).
	lagBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
	// durationBuckets: 1 ms to 10 min, the range of handler run times.
	durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	// scriptBuckets: 100 µs (a claim on a nearby Redis) to 10 s.
	scriptBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	// acquireBuckets: 100 µs (an uncontended acquire on a nearby Redis) to
	// 30 s (a waiter that outlasted a whole watchdog lease).
	acquireBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	// replicationBuckets: 100 µs (a replica on the same host) to 60 s,
	// the longest wait a Durability may ask for.
	replicationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
)

// Outcome is how an attempt ended: the outcome label of
// courier_jobs_processed_total.
type Outcome string

// The outcomes of an attempt.
const (
	OutcomeSuccess Outcome = "success" // acked
	OutcomeRetry   Outcome = "retry"   // failed, due again after a backoff
	OutcomeSnooze  Outcome = "snooze"  // the handler asked to run again later
	OutcomeDead    Outcome = "dead"    // failed for good
	// OutcomeCancelled: the process gave the job up: handed back at the
	// shutdown timeout, never started, its lease was lost, or the job was
	// cancelled while it ran (Client.Cancel).
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every Outcome.
var Outcomes = []Outcome{OutcomeSuccess, OutcomeRetry, OutcomeSnooze, OutcomeDead, OutcomeCancelled}

// MaxQueueLabels bounds the queue label values courier_jobs_enqueued_total
// takes for queues this process does not serve (a producer may name any
// queue); enqueues beyond it are counted under OtherQueue.
const MaxQueueLabels = 100

// OtherQueue is the queue label of enqueues to queues past MaxQueueLabels.
const OtherQueue = "_other"

type jobMetrics struct {
	enqueued    *prometheus.CounterVec
	duplicates  *prometheus.CounterVec
	processed   *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	lag         *prometheus.HistogramVec
	running     *prometheus.GaugeVec
	concurrency *prometheus.GaugeVec
	// replication and unreplicated: enqueues that asked for replicas
	// (worker.Durability).
	replication  *prometheus.HistogramVec
	unreplicated *prometheus.CounterVec

	mu     sync.Mutex
	labels map[string]bool // queue label values enqueued has taken
}

func newJobMetrics() *jobMetrics {
	return &jobMetrics{
		enqueued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_jobs_enqueued_total",
			Help: "Jobs this process added to the queue: periodic fires, admin API and Go producers (duplicates not counted).",
		}, []string{"queue"}),
		duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_jobs_duplicates_total",
			Help: "Enqueues this process had refused as duplicates, by reason: id (the job id exists, or is retained after its job finished) or unique (another job holds the unique key).",
		}, []string{"queue", "reason"}),
		processed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_jobs_processed_total",
			Help: "Attempts this process ended, by outcome: success, retry, snooze, dead, cancelled (handed back at shutdown, never started, lease lost, or cancelled while running).",
		}, []string{"queue", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "courier_job_duration_seconds",
			Help:    "Handler run time of each attempt.",
			Buckets: durationBuckets,
		}, []string{"queue"}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "courier_job_lag_seconds",
			Help:    "Time from a job's run-at to the start of its attempt.",
			Buckets: lagBuckets,
		}, []string{"queue"}),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_jobs_running",
			Help: "Jobs running in this process now.",
		}, []string{"queue"}),
		concurrency: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "courier_queue_concurrency",
			Help: "Handler goroutines this process runs for the queue: the most jobs it runs at once.",
		}, []string{"queue"}),
		replication: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "courier_enqueue_replication_seconds",
			Help:    "Time of each enqueue that asked for replicas (a Durability): the write and the wait for the replicas' confirmation (WAIT or WAITAOF) in one round trip.",
			Buckets: replicationBuckets,
		}, []string{"queue"}),
		unreplicated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_enqueue_unreplicated_total",
			Help: "Jobs this process added, asking for replicas (a Durability), that fewer replicas than asked confirmed in time: stored on the master, they may not survive a failover.",
		}, []string{"queue"}),
		labels: make(map[string]bool),
	}
}

// Serve creates the series of a queue this process works on, at zero, and
// records its concurrency: rates and alerts see them before the first job.
func (s *Set) Serve(queue string, concurrency int) {
	if s == nil {
		return
	}
	s.jobs.concurrency.WithLabelValues(queue).Set(float64(concurrency))
	s.jobs.running.WithLabelValues(queue)
	s.jobs.duration.WithLabelValues(queue)
	s.jobs.lag.WithLabelValues(queue)
	s.Enqueued(queue, 0)
	for _, r := range []string{DuplicateID, DuplicateUnique} {
		s.jobs.duplicates.WithLabelValues(s.jobs.label(queue), r)
	}
	for _, o := range Outcomes {
		s.jobs.processed.WithLabelValues(queue, string(o))
	}
}

// Stop removes the concurrency of the queues a stopped pool worked on: the
// process runs no handler for them any more.
func (s *Set) Stop(queues []string) {
	if s == nil {
		return
	}
	for _, q := range queues {
		s.jobs.concurrency.DeleteLabelValues(q)
	}
}

// Enqueued counts n jobs added to queue.
func (s *Set) Enqueued(queue string, n int) {
	if s == nil {
		return
	}
	s.jobs.enqueued.WithLabelValues(s.jobs.label(queue)).Add(float64(n))
}

// Duplicate reasons: the reason label of courier_jobs_duplicates_total.
const (
	DuplicateID     = "id"
	DuplicateUnique = "unique"
)

// Duplicates records n enqueues to queue refused for reason (DuplicateID
// or DuplicateUnique).
func (s *Set) Duplicates(queue, reason string, n int) {
	if s == nil || n == 0 {
		return
	}
	s.jobs.duplicates.WithLabelValues(s.jobs.label(queue), reason).Add(float64(n))
}

// Replicated creates the replication series of a queue whose enqueues
// ask for replicas by default (a Client's Config.Durability), at zero.
// Other queues get theirs at their first such enqueue (Replication).
func (s *Set) Replicated(queue string) {
	if s == nil {
		return
	}
	label := s.jobs.label(queue)
	s.jobs.replication.WithLabelValues(label)
	s.jobs.unreplicated.WithLabelValues(label)
}

// Replication records an enqueue to queue that asked for replicas: how
// long its write and wait took, and how many of the jobs it added were not
// confirmed (0 when all were).
func (s *Set) Replication(queue string, took time.Duration, unconfirmed int) {
	if s == nil {
		return
	}
	label := s.jobs.label(queue)
	s.jobs.replication.WithLabelValues(label).Observe(took.Seconds())
	s.jobs.unreplicated.WithLabelValues(label).Add(float64(unconfirmed))
}

// label returns queue, or OtherQueue once MaxQueueLabels queues have
// taken a label.
func (j *jobMetrics) label(queue string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.labels[queue] {
		if len(j.labels) >= MaxQueueLabels {
			return OtherQueue
		}
		j.labels[queue] = true
	}
	return queue
}

// Started records the start of an attempt of a job of queue that had been
// due for lag.
func (s *Set) Started(queue string, lag time.Duration) {
	if s == nil {
		return
	}
	s.jobs.running.WithLabelValues(queue).Inc()
	s.jobs.lag.WithLabelValues(queue).Observe(lag.Seconds())
}

// Ended records the end of an attempt: its outcome, and when it started
// (started) how long its handler ran.
func (s *Set) Ended(queue string, o Outcome, started bool, ran time.Duration) {
	if s == nil {
		return
	}
	if started {
		s.jobs.running.WithLabelValues(queue).Dec()
		s.jobs.duration.WithLabelValues(queue).Observe(ran.Seconds())
	}
	s.jobs.processed.WithLabelValues(queue, string(o)).Inc()
}

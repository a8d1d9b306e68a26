package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The kind label of the per-kind job metrics: NoKind for jobs without a
// kind, OtherKind for jobs of a kind the process does not serve on the
// queue. Neither is a valid kind (worker.ValidateKind), so neither hides
// one.
const (
	NoKind    = "(none)"
	OtherKind = "(other)"
)

// kindMetrics are the job metrics by kind, for queues served with
// worker.Kinds only: their label values come from the kinds a process
// registered, plus OtherKind, so their number is bounded by code, never by
// what producers send.
type kindMetrics struct {
	processed *prometheus.CounterVec
	duration  *prometheus.HistogramVec
}

func newKindMetrics() *kindMetrics {
	return &kindMetrics{
		processed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "courier_jobs_processed_by_kind_total",
			Help: "Attempts this process ended on a queue served with worker.Kinds, by job kind and outcome (as courier_jobs_processed_total); kind (none) for jobs without a kind, (other) for kinds the process does not serve.",
		}, []string{"queue", "kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "courier_job_duration_by_kind_seconds",
			Help:    "Handler run time of each attempt on a queue served with worker.Kinds, by job kind (as courier_job_duration_seconds).",
			Buckets: durationBuckets,
		}, []string{"queue", "kind"}),
	}
}

// Kinds records the attempts of one queue by kind. Its series are made
// once, by Set.Kinds, so recording looks up no label. A nil *Kinds
// records nothing.
type Kinds struct {
	byKind map[string]*kindSeries
	other  *kindSeries
}

type kindSeries struct {
	processed map[Outcome]prometheus.Counter
	duration  prometheus.Observer
}

// Kinds creates, at zero, the per-kind series of a queue served with the
// kinds given ("" for jobs without a kind) and OtherKind, and returns
// their recorder; nil for a nil Set.
func (s *Set) Kinds(queue string, kinds []string) *Kinds {
	if s == nil {
		return nil
	}
	series := func(label string) *kindSeries {
		ks := &kindSeries{processed: make(map[Outcome]prometheus.Counter, len(Outcomes)),
			duration: s.kinds.duration.WithLabelValues(queue, label)}
		for _, o := range Outcomes {
			ks.processed[o] = s.kinds.processed.WithLabelValues(queue, label, string(o))
		}
		return ks
	}
	k := &Kinds{byKind: make(map[string]*kindSeries, len(kinds)), other: series(OtherKind)}
	for _, kind := range kinds {
		label := kind
		if kind == "" {
			label = NoKind
		}
		k.byKind[kind] = series(label)
	}
	return k
}

// Ended records the end of an attempt of a job of kind, as Set.Ended does.
func (k *Kinds) Ended(kind string, o Outcome, started bool, ran time.Duration) {
	if k == nil {
		return
	}
	ks, ok := k.byKind[kind]
	if !ok {
		ks = k.other
	}
	if started {
		ks.duration.Observe(ran.Seconds())
	}
	ks.processed[o].Inc()
}

package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestKindMetrics: a queue served with Kinds (3 partitions) counts its
// attempts by kind, its kinds from the start and every kind it does not
// serve under (other); a queue of one handler has no series by kind.
func TestKindMetrics(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Registerer = reg
	c := newClient(t, rdb, cfg)
	ok := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	r := register(t, nil, "km", worker.Kinds{"mail": ok, "": ok}, worker.QueueOptions{Partitions: 3})
	register(t, r, "plain", ok, worker.QueueOptions{})
	startDaemon(t, rdb, r, cfg)
	for _, spec := range []worker.JobSpec{
		{Queue: "km", Kind: "mail"}, {Queue: "km", Kind: "mail"}, {Queue: "km"},
		{Queue: "km", Kind: "typo-1"}, {Queue: "km", Kind: "typo-2"}, {Queue: "plain", Kind: "mail"},
	} {
		enqueue(t, c, spec)
	}
	value := func(labels ...string) float64 {
		return testkit.Metric(t, reg, "courier_jobs_processed_by_kind_total", labels...)
	}
	testkit.Eventually(t, 15*time.Second, "every job to end", func() bool {
		return value("queue", "km", "kind", "mail", "outcome", "success") == 2 &&
			value("queue", "km", "kind", "(none)", "outcome", "success") == 1 &&
			value("queue", "km", "kind", "(other)", "outcome", "dead") == 2 &&
			testkit.Metric(t, reg, "courier_jobs_processed_total", "queue", "plain", "outcome", "success") == 1
	})
	got := testkit.Series(t, reg)
	if n := got[`courier_job_duration_by_kind_seconds_count{kind="mail",queue="km"}`]; n != 2 {
		t.Errorf("duration count of kind mail = %v, want 2", n)
	}
	if _, ok := got[`courier_jobs_processed_by_kind_total{kind="mail",outcome="retry",queue="km"}`]; !ok {
		t.Errorf("a served kind's outcomes do not start at 0")
	}
	for s := range got {
		if strings.Contains(s, "by_kind") && strings.Contains(s, `queue="plain"`) {
			t.Errorf("the queue of one handler has a series by kind: %s", s)
		}
		if strings.Contains(s, "typo") {
			t.Errorf("an unknown kind took a label value: %s", s)
		}
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("GatherAndLint: %v %+v", err, problems)
	}
}

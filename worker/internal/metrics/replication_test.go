package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestReplication: a queue with a default Durability has its series at
// zero; each enqueue that waited is observed once and its unconfirmed jobs
// counted.
func TestReplication(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	s.Replicated("emails")
	want := `
# HELP courier_enqueue_unreplicated_total Jobs this process added, asking for replicas (a Durability), that fewer replicas than asked confirmed in time: stored on the master, they may not survive a failover.
# TYPE courier_enqueue_unreplicated_total counter
courier_enqueue_unreplicated_total{queue="emails"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "courier_enqueue_unreplicated_total"); err != nil {
		t.Error(err)
	}
	s.Replication("emails", 3*time.Millisecond, 0)
	s.Replication("emails", 120*time.Millisecond, 7)
	s.Replication("sms", time.Second, 1)
	if v := testutil.ToFloat64(s.jobs.unreplicated.WithLabelValues("emails")); v != 7 {
		t.Errorf("unreplicated emails = %v, want 7", v)
	}
	if v := testutil.ToFloat64(s.jobs.unreplicated.WithLabelValues("sms")); v != 1 {
		t.Errorf("unreplicated sms = %v, want 1", v)
	}
	if n := testutil.CollectAndCount(s.jobs.replication); n != 2 {
		t.Errorf("%d replication histograms, want 2", n)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
	var nilSet *Set
	nilSet.Replicated("q") // must not panic
	nilSet.Replication("q", time.Second, 1)
}

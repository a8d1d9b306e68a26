package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestLeaderAndQueueGauges(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	s.Leader("emails", true)
	s.QueueJobs("emails", QueueSizes{Scheduled: 1, Ready: 2, Active: 3, Dead: 4, Completed: 5})
	s.QueuePaused("emails", true)
	s.QueuePaused("sms", false)
	want := `
# HELP courier_leader 1 while this process leads the queue (holds its leader lock and runs its carrier duties), else 0.
# TYPE courier_leader gauge
courier_leader{queue="emails"} 1
# HELP courier_queue_jobs Jobs of the queue by state, sampled by the queue's leader: scheduled (due later), ready (due now), active (running), dead, completed (finished and retained).
# TYPE courier_queue_jobs gauge
courier_queue_jobs{queue="emails",state="active"} 3
courier_queue_jobs{queue="emails",state="completed"} 5
courier_queue_jobs{queue="emails",state="dead"} 4
courier_queue_jobs{queue="emails",state="ready"} 2
courier_queue_jobs{queue="emails",state="scheduled"} 1
# HELP courier_queue_paused 1 while the queue is paused (no process claims its jobs), else 0; sampled by the queue's leader.
# TYPE courier_queue_paused gauge
courier_queue_paused{queue="emails"} 1
courier_queue_paused{queue="sms"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "courier_leader", "courier_queue_jobs", "courier_queue_paused"); err != nil {
		t.Error(err)
	}
	// A former leader stops reporting the queue's sizes and pause: they
	// would be stale.
	s.Leader("emails", false)
	if n := testutil.CollectAndCount(s.queueJobs); n != 0 {
		t.Errorf("%d queue samples left after losing the lead, want 0", n)
	}
	if n := testutil.CollectAndCount(s.queuePaused); n != 1 {
		t.Errorf("%d pause samples left after losing the lead of emails, want 1 (sms)", n)
	}
	if v := testutil.ToFloat64(s.leader.WithLabelValues("emails")); v != 0 {
		t.Errorf("courier_leader = %v after losing the lead", v)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

func TestSecondDaemonSharesTheMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	a, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(reg)
	if err != nil {
		t.Fatalf("second New on the same registry: %v", err)
	}
	b.Leader("q", true)
	if v := testutil.ToFloat64(a.leader.WithLabelValues("q")); v != 1 {
		t.Errorf("the second set does not share the first's gauge: %v", v)
	}
}

func TestNilSetRecordsNothing(t *testing.T) {
	t.Parallel()
	s, err := New(nil)
	if err != nil || s != nil {
		t.Fatalf("New(nil) = %v, %v", s, err)
	}
	s.Leader("q", true) // must not panic
	s.QueueJobs("q", QueueSizes{})
	s.QueuePaused("q", true)
}

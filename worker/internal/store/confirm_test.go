package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestEnqueueConfirmedWithoutReplicas: on servers without replicas the
// jobs are stored, and the wait answers 0 once its timeout is over, not
// much later.
func TestEnqueueConfirmedWithoutReplicas(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		const timeout = 100 * time.Millisecond
		start := time.Now()
		out, conf, err := s.EnqueueConfirmed(t.Context(), store.Target{Partition: queue, Version: -1}, []store.NewJob{job("a", "1"), job("b", "2")}, 1, timeout, false)
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 2 || !out[0].Added || !out[1].Added {
			t.Errorf("enqueued = %+v, want both added", out)
		}
		if conf.Replicas != 0 || conf.Err != nil || !conf.Local {
			t.Errorf("confirmed = %+v, want 0 replicas, no error", conf)
		}
		if took < timeout || took > timeout+time.Second {
			t.Errorf("took %s; want the timeout, %s, and little more", took, timeout)
		}
		get(t, s, "a")
		get(t, s, "b")

		// A duplicate is reported as EnqueueJobs reports it.
		out, _, err = s.EnqueueConfirmed(t.Context(), store.Target{Partition: queue, Version: -1}, []store.NewJob{job("a", "again")}, 1, time.Millisecond, false)
		if err != nil || len(out) != 1 || out[0].Added {
			t.Errorf("enqueue of an existing id = %+v, %v; want not added", out, err)
		}
	})
}

// TestEnqueueConfirmedByReplica: with a replica in sync the wait answers
// 1 at once; asked for 2, it answers 1 at the timeout.
func TestEnqueueConfirmedByReplica(t *testing.T) {
	t.Parallel()
	master := testkit.StartPrivate(t)
	testkit.StartReplica(t, master)
	c := master.Client(t)
	s := store.New(c, testkit.Prefix(t), nil)

	start := time.Now()
	out, conf, err := s.EnqueueConfirmed(t.Context(), store.Target{Partition: queue, Version: -1}, []store.NewJob{job("a", "1")}, 1, 5*time.Second, false)
	if err != nil || len(out) != 1 || !out[0].Added {
		t.Fatalf("EnqueueConfirmed = %+v, %v", out, err)
	}
	if conf.Replicas != 1 || conf.Err != nil {
		t.Errorf("confirmed = %+v, want 1 replica", conf)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s with the replica in sync", took)
	}

	out, conf, err = s.EnqueueConfirmed(t.Context(), store.Target{Partition: queue, Version: -1}, []store.NewJob{job("b", "2")}, 2, 50*time.Millisecond, false)
	if err != nil || len(out) != 1 || !out[0].Added {
		t.Fatalf("EnqueueConfirmed = %+v, %v", out, err)
	}
	if conf.Replicas != 1 {
		t.Errorf("confirmed = %+v, want 1 of the 2 replicas asked", conf)
	}
}

// TestEnqueueConfirmedAfterScriptFlush: a call answered NOSCRIPT goes again
// as EVAL on the same connection, followed by the wait, which counts it.
func TestEnqueueConfirmedAfterScriptFlush(t *testing.T) {
	t.Parallel()
	master := testkit.StartPrivate(t)
	testkit.StartReplica(t, master)
	c := master.Client(t)
	s := store.New(c, testkit.Prefix(t), nil)
	enqueue(t, s, job("cached", "")) // the script is cached now
	master.MustDo(t, "SCRIPT", "FLUSH")

	jobs := make([]store.NewJob, store.MaxBatch+1) // two script calls
	for i := range jobs {
		jobs[i] = job(fmt.Sprintf("j%04d", i), "")
	}
	out, conf, err := s.EnqueueConfirmed(t.Context(), store.Target{Partition: queue, Version: -1}, jobs, 1, 5*time.Second, false)
	if err != nil || len(out) != len(jobs) {
		t.Fatalf("EnqueueConfirmed = %d results, %v", len(out), err)
	}
	if conf.Replicas != 1 || conf.Err != nil {
		t.Errorf("confirmed = %+v, want 1 replica", conf)
	}
	get(t, s, jobs[len(jobs)-1].ID)
}

// TestEnqueueConfirmedOnCluster: on a Cluster with a replica per master,
// the wait goes to the master of the queue's slot, on the connection of
// the write, whichever master that is.
func TestEnqueueConfirmedOnCluster(t *testing.T) {
	t.Parallel()
	cluster := testkit.StartPrivateCluster(t, 3, 1)
	c := cluster.Client(t)
	s := store.New(c, testkit.Prefix(t), nil)
	masters := map[string]bool{}
	for _, q := range []string{"a", "b", "c", "d", "e", "f"} {
		out, conf, err := s.EnqueueConfirmed(t.Context(), store.Target{Partition: q, Version: -1}, []store.NewJob{job("j", q)}, 1, 10*time.Second, false)
		if err != nil || len(out) != 1 || !out[0].Added {
			t.Fatalf("queue %s: EnqueueConfirmed = %+v, %v", q, out, err)
		}
		if conf.Replicas != 1 || conf.Err != nil {
			t.Errorf("queue %s: confirmed = %+v, want 1 replica", q, conf)
		}
		masters[cluster.NodeOf(t, s.Keys(q).Jobs).Addr] = true
	}
	if len(masters) < 2 {
		t.Errorf("the queues all live on %v; the test wants more than one master", masters)
	}
}

// TestEnqueueConfirmedAOF: WAITAOF where the server has it; on a server
// without it (Redis before 7.2), a clear error and nothing written.
func TestEnqueueConfirmedAOF(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t, "--appendonly", "yes")
	c := p.Client(t)
	s := store.New(c, testkit.Prefix(t), nil)
	has, err := c.Do(t.Context(), c.B().CommandInfo().CommandName("waitaof").Build()).ToArray()
	if err != nil {
		t.Fatal(err)
	}
	out, conf, err := s.EnqueueConfirmed(t.Context(), store.Target{Partition: queue, Version: -1}, []store.NewJob{job("a", "1")}, 0, time.Second, true)
	if len(has) == 1 && !has[0].IsNil() { // Redis 7.2 and later
		if err != nil || len(out) != 1 || !out[0].Added || !conf.Local || conf.Err != nil {
			t.Errorf("EnqueueConfirmed with WAITAOF = %+v, %+v, %v; want added, written locally", out, conf, err)
		}
		return
	}
	var noAOF *store.NoWaitAOFError
	if !errors.Is(err, store.ErrNoWaitAOF) || !errors.As(err, &noAOF) {
		t.Fatalf("EnqueueConfirmed with AOF on a server without WAITAOF: %+v, %v; want ErrNoWaitAOF", out, err)
	}
	if len(out) != 0 {
		t.Errorf("results %+v with the error", out)
	}
	if !strings.HasPrefix(noAOF.Version, "7.") || !strings.Contains(err.Error(), "("+noAOF.Version+") has no WAITAOF; it needs Redis 7.2") {
		t.Errorf("error %q (version %q)", err, noAOF.Version)
	}
	if testkit.Exists(t, c, s.Keys(queue).Jobs) {
		t.Error("the job was written although the server has no WAITAOF")
	}
	// The answer is remembered (for a minute): the same error.
	if _, _, err := s.EnqueueConfirmed(t.Context(), store.Target{Partition: queue, Version: -1}, []store.NewJob{job("a", "1")}, 1, time.Second, true); !errors.Is(err, store.ErrNoWaitAOF) {
		t.Errorf("second call: %v", err)
	}
}

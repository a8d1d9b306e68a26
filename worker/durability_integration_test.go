package worker_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestEnqueueNotReplicated: without replicas an enqueue that asks for one
// stores the job and returns its id with a *NotReplicatedError; the wait
// and the unconfirmed job are counted.
func TestEnqueueNotReplicated(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		reg := prometheus.NewRegistry()
		cfg := testConfig(t, prefix)
		cfg.Registerer = reg
		c := newClient(t, rdb, cfg)
		d := worker.Durability{Replicas: 1, Timeout: 50 * time.Millisecond}
		id, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", Payload: []byte("x"), Durability: d})
		var nr *worker.NotReplicatedError
		if !errors.Is(err, worker.ErrNotReplicated) || !errors.As(err, &nr) {
			t.Fatalf("Enqueue = %q, %v; want ErrNotReplicated", id, err)
		}
		if id == "" || nr.Queue != "q" || nr.Want != 1 || nr.Got != 0 || nr.Timeout != d.Timeout {
			t.Errorf("id %q, error %+v", id, nr)
		}
		if job := getJob(t, c, "q", id); string(job.Payload) != "x" {
			t.Errorf("stored job = %+v", job)
		}
		if v := testkit.Metric(t, reg, "courier_enqueue_unreplicated_total", "queue", "q"); v != 1 {
			t.Errorf("courier_enqueue_unreplicated_total = %v, want 1", v)
		}
		if v := testkit.Metric(t, reg, "courier_enqueue_replication_seconds", "queue", "q"); v != 1 {
			t.Errorf("courier_enqueue_replication_seconds count = %v, want 1", v)
		}
		if v := testkit.Metric(t, reg, "courier_jobs_enqueued_total", "queue", "q"); v != 1 {
			t.Errorf("courier_jobs_enqueued_total = %v, want 1: the job is stored", v)
		}

		// In a batch, the duplicate is a duplicate; the added job is not
		// confirmed.
		res, err := c.EnqueueMany(t.Context(), []worker.JobSpec{
			{Queue: "q", ID: id, Durability: d},
			{Queue: "q", ID: "new", Durability: d},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res[0].Err, worker.ErrDuplicate) || errors.Is(res[0].Err, worker.ErrNotReplicated) {
			t.Errorf("the existing id: %v; want ErrDuplicate only", res[0].Err)
		}
		if res[1].ID != "new" || !errors.Is(res[1].Err, worker.ErrNotReplicated) {
			t.Errorf("the new job: %+v; want ErrNotReplicated", res[1])
		}
	})
}

// TestEnqueueDurabilityDefault: Config.Durability is the default of its
// queue; a job's own Durability wins.
func TestEnqueueDurabilityDefault(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.Durability = map[string]worker.Durability{"waits": {Replicas: 1, Timeout: 20 * time.Millisecond}}
		c := newClient(t, rdb, cfg)
		if _, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "waits"}); !errors.Is(err, worker.ErrNotReplicated) {
			t.Errorf("queue with a default: %v; want ErrNotReplicated", err)
		}
		if _, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "other"}); err != nil {
			t.Errorf("queue without one: %v", err)
		}
		_, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "other", Durability: worker.Durability{Replicas: 2, Timeout: 10 * time.Millisecond}})
		var nr *worker.NotReplicatedError
		if !errors.As(err, &nr) || nr.Want != 2 {
			t.Errorf("a job's own Durability: %v; want 0 of 2", err)
		}
	})
}

// TestEnqueueReplicated: with a replica in sync the enqueue is confirmed.
func TestEnqueueReplicated(t *testing.T) {
	t.Parallel()
	master := testkit.StartPrivate(t)
	testkit.StartReplica(t, master)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Registerer = reg
	c := newClient(t, master.Client(t), cfg)
	id, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", Durability: worker.Durability{Replicas: 1, Timeout: 5 * time.Second}})
	if err != nil || id == "" {
		t.Fatalf("Enqueue = %q, %v", id, err)
	}
	if v := testkit.Metric(t, reg, "courier_enqueue_unreplicated_total", "queue", "q"); v != 0 {
		t.Errorf("courier_enqueue_unreplicated_total = %v, want 0", v)
	}
	if v := testkit.Metric(t, reg, "courier_enqueue_replication_seconds", "queue", "q"); v != 1 {
		t.Errorf("courier_enqueue_replication_seconds count = %v, want 1", v)
	}
}

// TestEnqueueAOF: on Redis before 7.2, asking for AOF is a validation
// error naming Durability.AOF, and nothing is stored; on a later one, the
// master's own append-only file confirms it.
func TestEnqueueAOF(t *testing.T) {
	t.Parallel()
	p := testkit.StartPrivate(t, "--appendonly", "yes")
	c := newClient(t, p.Client(t), testConfig(t, testkit.Prefix(t)))
	_, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", ID: "a", Durability: worker.Durability{AOF: true, Timeout: time.Second}})
	if info := p.MustDo(t, "INFO", "server"); !regexp.MustCompile(`redis_version:(6\.|7\.[01]\.)`).MatchString(info) {
		if err != nil {
			t.Errorf("Enqueue with AOF on a Redis that has WAITAOF: %v", err)
		}
		return
	}
	var ve *worker.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Durability.AOF" || !strings.Contains(ve.Reason, "has no WAITAOF; it needs Redis 7.2") {
		t.Fatalf("Enqueue with AOF on 7.0: %v; want invalid Durability.AOF", err)
	}
	if _, err := c.Get(t.Context(), "q", "a"); !errors.Is(err, worker.ErrNotFound) {
		t.Errorf("Get after the refused enqueue: %v; want ErrNotFound", err)
	}
}

// TestEnqueueDurabilityValidated: a bad Durability is refused before
// anything is written, by its field.
func TestEnqueueDurabilityValidated(t *testing.T) {
	t.Parallel()
	c := newClient(t, testkit.Single(t), testConfig(t, testkit.Prefix(t)))
	_, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", Durability: worker.Durability{Replicas: 1}})
	var ve *worker.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Durability.Timeout" {
		t.Errorf("Enqueue without a timeout: %v; want invalid Durability.Timeout", err)
	}
	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Durability = map[string]worker.Durability{"q": {Replicas: 99, Timeout: time.Second}}
	if _, err := worker.NewClient(testkit.Single(t), cfg); !errors.As(err, &ve) || ve.Field != `Durability["q"].Replicas` {
		t.Errorf("NewClient with a bad default: %v; want invalid Durability[\"q\"].Replicas", err)
	}
}

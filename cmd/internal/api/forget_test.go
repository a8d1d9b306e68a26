package api

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// queueNames lists the queues GET /v1/queues shows.
func (b *bundle) queueNames() []string {
	b.t.Helper()
	var list queueList
	b.want(b.do("GET", "/v1/queues", adminSecret, ""), 200).json(b.t, &list)
	var names []string
	for _, q := range list.Queues {
		names = append(names, q.Name)
	}
	return names
}

// TestForgetQueue: DELETE /v1/queues/{queue} forgets a queue nothing
// holds, and refuses one in use with 409 saying what holds it; the API
// client's ForgetQueue fails with worker.ErrQueueInUse then.
func TestForgetQueue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, adminSecret)
	b.enqueue(worker.JobSpec{Queue: "retired", ID: "last", Delay: time.Hour})
	if names := b.queueNames(); !slices.Contains(names, "retired") {
		t.Fatalf("queues %v", names)
	}

	before := b.snapshot()
	r := b.want(b.do("DELETE", "/v1/queues/retired", adminSecret, ""), 409)
	if e := r.apiErr(t); e.Code != wire.CodeConflict || e.Field != "queue" || !strings.Contains(e.Message, "1 scheduled job") {
		t.Errorf("forget a queue in use: %+v", e)
	}
	err := c.Forget(t.Context(), "retired")
	if !errors.Is(err, admin.ErrQueueInUse) || !strings.Contains(err.Error(), "1 scheduled job") {
		t.Errorf("the API client: %v, want one wrapping admin.ErrQueueInUse that says why", err)
	}
	if wire.CodeOf(err) != wire.CodeConflict {
		t.Errorf("CodeOf(%v) = %s", err, wire.CodeOf(err))
	}
	if !maps.Equal(b.snapshot(), before) {
		t.Error("a refused forget changed Redis")
	}

	b.want(b.do("DELETE", "/v1/queues/retired/jobs/last", adminSecret, ""), 204)
	r = b.want(b.do("DELETE", "/v1/queues/retired", adminSecret, ""), 409)
	if e := r.apiErr(t); !strings.Contains(e.Message, "1 cancelled job") {
		t.Errorf("forget a queue holding a cancelled job: %+v", e)
	}
	b.want(b.do("POST", "/v1/queues/retired/cancelled/purge", adminSecret, ""), 200)
	b.want(b.do("DELETE", "/v1/queues/retired", adminSecret, ""), 204)
	if names := b.queueNames(); slices.Contains(names, "retired") {
		t.Errorf("a forgotten queue is still listed: %v", names)
	}
	// A queue that is not known: no error.
	b.want(b.do("DELETE", "/v1/queues/never-used", adminSecret, ""), 204)
	if err := c.Forget(t.Context(), "never-used"); err != nil {
		t.Errorf("the API client: %v", err)
	}
}

// TestClientFleet: the API client's Fleet, from GET /v1/queues/{queue},
// is admin.Client's.
func TestClientFleet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, adminSecret)
	idle := func(context.Context, *worker.Job) error { return nil }
	b.run("fleet", idle, worker.QueueOptions{Concurrency: 3, RateLimit: worker.RateLimit{N: 7, Per: 1500 * time.Millisecond}})
	b.run("fleet", idle, worker.QueueOptions{Concurrency: 4})
	testkit.Eventually(t, 10*time.Second, "a leader and two processes", func() bool {
		f, err := b.client.Fleet(t.Context(), "fleet")
		return err == nil && f.Leader != "" && len(f.Processes) == 2
	})
	// Reports are rewritten on a timer: read both sides until they agree
	// on one report.
	testkit.Eventually(t, 10*time.Second, "the same fleet both ways", func() bool {
		direct, err := b.client.Fleet(t.Context(), "fleet")
		if err != nil {
			t.Fatal(err)
		}
		viaAPI, err := c.Fleet(t.Context(), "fleet")
		if err != nil {
			t.Fatal(err)
		}
		// The lock's time left runs down, and is renewed, between the two
		// reads.
		if direct.LeaderTTL <= 0 || viaAPI.LeaderTTL <= 0 {
			t.Fatalf("leader TTL: direct %s, through the API %s", direct.LeaderTTL, viaAPI.LeaderTTL)
		}
		direct.LeaderTTL, viaAPI.LeaderTTL = 0, 0
		return reflect.DeepEqual(viaAPI, direct)
	})
	if _, err := c.Fleet(t.Context(), "a b"); !errors.Is(err, worker.ErrInvalid) {
		t.Errorf("a bad queue name: %v", err)
	}
}

package worker_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// TestEnqueueHooks: a Client's hooks run in order on every job of
// Enqueue, EnqueueMany and Producer, before validation; what they add is
// stored, the caller's specs are left alone, and a refusal writes nothing
// of the call.
func TestEnqueueHooks(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		c.Use(tenantHeader, func(ctx context.Context, spec *worker.JobSpec) error {
			// The second hook sees what the first did.
			spec.Headers["seen"] = spec.Headers["tenant"]
			if string(spec.Payload) == "refuse" {
				return errors.New("refused by policy")
			}
			return nil
		})
		acme := context.WithValue(t.Context(), tenantKey{}, "acme")
		want := map[string]string{"tenant": "acme", "seen": "acme"}

		own := map[string]string{"x": "1"}
		id, err := c.Enqueue(acme, worker.JobSpec{Queue: "hooks", Headers: own})
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		if got := getJob(t, c, "hooks", id).Headers; !maps.Equal(got, map[string]string{"x": "1", "tenant": "acme", "seen": "acme"}) {
			t.Errorf("headers stored %v", got)
		}
		if len(own) != 1 {
			t.Errorf("the caller's headers changed: %v", own)
		}

		specs := []worker.JobSpec{{Queue: "hooks", Payload: []byte("a")}, {Queue: "hooks", Payload: []byte("b")}}
		res, err := c.EnqueueMany(acme, specs)
		if err != nil {
			t.Fatalf("EnqueueMany: %v", err)
		}
		for _, r := range res {
			if got := getJob(t, c, "hooks", r.ID).Headers; !maps.Equal(got, want) {
				t.Errorf("job %s: headers %v, want %v", r.ID, got, want)
			}
		}
		if specs[0].Headers != nil {
			t.Errorf("the caller's spec changed: %+v", specs[0])
		}

		p := worker.NewProducer[Report](c.Client, "hooks")
		pid, err := p.Enqueue(acme, Report{Kind: "daily"})
		if err != nil {
			t.Fatalf("Producer.Enqueue: %v", err)
		}
		if got := getJob(t, c, "hooks", pid).Headers; !maps.Equal(got, want) {
			t.Errorf("producer's job: headers %v, want %v", got, want)
		}

		before := stats(t, c, "hooks").Ready
		_, err = c.EnqueueMany(acme, []worker.JobSpec{{Queue: "hooks"}, {Queue: "hooks", Payload: []byte("refuse")}})
		if err == nil || !strings.Contains(err.Error(), "enqueue hook 1 refused specs[1]: refused by policy") {
			t.Errorf("EnqueueMany with a refused job = %v", err)
		}
		if _, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "hooks"}); err == nil || !strings.Contains(err.Error(), "no tenant in the context") {
			t.Errorf("Enqueue without a tenant = %v", err)
		}
		if after := stats(t, c, "hooks").Ready; after != before {
			t.Errorf("refused calls wrote %d jobs, want none", after-before)
		}

		// What a hook adds is validated.
		bad := context.WithValue(t.Context(), tenantKey{}, "bad\ntenant")
		_, err = c.Enqueue(bad, worker.JobSpec{Queue: "hooks"})
		var ve *worker.ValidationError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, "Headers") {
			t.Errorf("Enqueue with a hook's bad header = %v, want a validation error of Headers", err)
		}
	})
}

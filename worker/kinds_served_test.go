package worker_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestUnservedQueuesAndKinds: the operator's enqueue warns of a queue, or
// a kind of a queue (split in 3 partitions), no daemon ever served, and a
// Client with RefuseUnserved refuses it writing nothing; what daemons
// served is recorded from their start, outlives them, shows per process in
// the fleet, and goes with an operator's Forget of the queue. A queue of
// one handler serves every kind.
func TestUnservedQueuesAndKinds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		ctx := t.Context()
		cfg := testConfig(t, prefix)
		op := newClient(t, rdb, cfg).Op
		strictCfg := cfg
		strictCfg.RefuseUnserved = true
		strict := newClient(t, rdb, strictCfg)
		warning := func(spec worker.JobSpec) string {
			t.Helper()
			res, err := op.Enqueue(ctx, []worker.JobSpec{spec})
			if err != nil || res[0].Err != nil {
				t.Fatalf("admin Enqueue %+v: %v, %+v", spec, err, res)
			}
			return res[0].Warning
		}
		refused := func(what string, specs ...worker.JobSpec) error {
			t.Helper()
			_, err := strict.EnqueueMany(ctx, specs)
			if !errors.Is(err, worker.ErrUnserved) {
				t.Errorf("%s: RefuseUnserved EnqueueMany = %v; want ErrUnserved", what, err)
			}
			return err
		}

		if w := warning(worker.JobSpec{Queue: "reprots"}); w != `no daemon has ever served queue "reprots"` {
			t.Errorf("warning of a queue never served: %q", w)
		}
		if err := refused("a queue never served", worker.JobSpec{Queue: "reports", ID: "r1"}); err != nil && !strings.Contains(err.Error(), `queue "reports"`) {
			t.Errorf("refusal %q does not name the queue", err)
		}
		if _, err := strict.Get(ctx, "reports", "r1"); !errors.Is(err, worker.ErrNotFound) {
			t.Errorf("a refused job was stored: Get = %v", err)
		}

		ok := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
		reg := register(t, nil, "reports", worker.Kinds{"a": ok, "b": ok}, worker.QueueOptions{Partitions: 3})
		register(t, reg, "plain", ok, worker.QueueOptions{})
		register(t, reg, "spare", ok, worker.QueueOptions{})
		d := startDaemon(t, rdb, reg, cfg)
		testkit.Eventually(t, 10*time.Second, "the daemon's queues to be recorded as served", func() bool {
			return warning(worker.JobSpec{Queue: "spare"}) == "" // its jobs run at once
		})
		for _, tt := range []struct {
			spec worker.JobSpec
			want string
		}{
			{worker.JobSpec{Queue: "reports", Kind: "a"}, ""},
			{worker.JobSpec{Queue: "reports", Kind: "reprot"}, `no daemon has ever served kind "reprot" of queue "reports" (kinds served: a, b)`},
			{worker.JobSpec{Queue: "reports"}, `no daemon has ever served jobs without a kind of queue "reports" (kinds served: a, b)`},
			{worker.JobSpec{Queue: "plain", Kind: "anything"}, ""},
			{worker.JobSpec{Queue: "plain"}, ""},
		} {
			if w := warning(tt.spec); w != tt.want {
				t.Errorf("warning of %s/%q = %q; want %q", tt.spec.Queue, tt.spec.Kind, w, tt.want)
			}
		}
		if _, err := strict.EnqueueMany(ctx, []worker.JobSpec{{Queue: "reports", Kind: "b"}, {Queue: "plain"}}); err != nil {
			t.Errorf("RefuseUnserved, served queues and kinds: %v", err)
		}
		err := refused("a kind never served", worker.JobSpec{Queue: "plain", ID: "p1"}, worker.JobSpec{Queue: "reports", ID: "x1", Kind: "x"})
		if err != nil && !strings.Contains(err.Error(), `specs[1]: no daemon has ever served kind "x" of queue "reports"`) {
			t.Errorf("refusal %q does not name the spec, kind and queue", err)
		}
		if _, err := strict.Get(ctx, "plain", "p1"); !errors.Is(err, worker.ErrNotFound) {
			t.Errorf("a job of a refused batch was stored: Get = %v", err)
		}

		f, err := op.Fleet(ctx, "reports")
		if err != nil || len(f.Processes) != 1 || !slices.Equal(f.Processes[0].Kinds, []string{"a", "b"}) {
			t.Errorf("Fleet of the Kinds queue = %+v, %v; want one process serving kinds a, b", f.Processes, err)
		}
		if f, err := op.Fleet(ctx, "plain"); err != nil || len(f.Processes) != 1 || f.Processes[0].Kinds != nil {
			t.Errorf("Fleet of the queue of one handler = %+v, %v; want Kinds nil", f.Processes, err)
		}

		// The record outlives the daemon; Forget of the queue ends it.
		if err := d.Stop(t, 15*time.Second); err != nil {
			t.Fatal(err)
		}
		later := newClient(t, rdb, strictCfg) // remembers nothing: reads the record
		if _, err := later.Enqueue(ctx, worker.JobSpec{Queue: "reports", Kind: "a", Delay: time.Hour}); err != nil {
			t.Errorf("RefuseUnserved after the daemon stopped: %v", err)
		}
		testkit.Eventually(t, 10*time.Second, "the stopped daemon to leave the spare queue", func() bool {
			f, err := op.Fleet(ctx, "spare")
			return err == nil && len(f.Processes) == 0 && f.Leader == ""
		})
		testkit.Eventually(t, 10*time.Second, "Forget of the spare queue", func() bool {
			return op.Forget(ctx, "spare") == nil
		})
		if w := warning(worker.JobSpec{Queue: "spare", Delay: time.Hour}); w != `no daemon has ever served queue "spare"` {
			t.Errorf("warning after Forget: %q", w)
		}
	})
}

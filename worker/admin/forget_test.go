package admin_test

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
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// TestForgetQueue: a retired queue is refused while a Daemon serves it,
// forgotten once the Daemon stopped (its keys gone, Queues no longer lists
// it), and listed again when a job is enqueued to it.
func TestForgetQueue(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		ctx := t.Context()
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		reg := workertest.Register(t, nil, "retired", worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }), worker.QueueOptions{})
		d := workertest.StartDaemon(t, rdb, reg, workertest.Config(t, prefix))
		// Enqueued through the operator's Client, which then forgets the
		// queue: its next enqueue records the name again at once.
		res, err := c.Op.Enqueue(ctx, []worker.JobSpec{{Queue: "retired"}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("Enqueue = %+v, %v", res, err)
		}
		id := res[0].ID
		testkit.Eventually(t, 10*time.Second, "the job to run", func() bool { return workertest.IsGone(t, c, "retired", id) })

		err = c.Forget(ctx, "retired")
		if !errors.Is(err, admin.ErrQueueInUse) || !strings.Contains(err.Error(), "served by 1 process ("+d.ID()+")") {
			t.Fatalf("ForgetQueue of a served queue = %v; want ErrQueueInUse naming the process", err)
		}
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := c.Forget(ctx, "retired"); err != nil {
			t.Fatalf("ForgetQueue after the daemon stopped: %v", err)
		}
		if names, err := c.AllQueues(ctx); err != nil || slices.Contains(names, "retired") {
			t.Errorf("Queues = %v, %v; want retired gone", names, err)
		}
		for _, key := range rediskeys.QueueKeys(prefix, "retired").All() {
			if testkit.Exists(t, rdb, key) {
				t.Errorf("%s is left after ForgetQueue", key)
			}
		}
		if err := c.Forget(ctx, "retired"); err != nil {
			t.Errorf("ForgetQueue again: %v; want nil", err)
		}
		if res, err := c.Op.Enqueue(ctx, []worker.JobSpec{{Queue: "retired"}}); err != nil || res[0].Err != nil {
			t.Fatalf("Enqueue after the forget = %+v, %v", res, err)
		}
		if names, err := c.AllQueues(ctx); err != nil || !slices.Contains(names, "retired") {
			t.Errorf("Queues after a new enqueue = %v, %v; want retired listed again", names, err)
		}
	})
}

// TestForgetQueueInUse: the refusal says everything that holds the queue,
// and nothing is deleted; once released, the queue is forgotten.
func TestForgetQueueInUse(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		ctx := t.Context()
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		workertest.Enqueue(t, c, worker.JobSpec{Queue: "kept", Delay: time.Hour})
		workertest.Enqueue(t, c, worker.JobSpec{Queue: "kept", UniqueKey: "u", UniqueFor: time.Hour})
		if err := c.Pause(ctx, "kept"); err != nil {
			t.Fatal(err)
		}
		err := c.Forget(ctx, "kept")
		want := `forget queue "kept": queue in use: 1 scheduled job, 1 ready job, paused (resume it first), 1 unique key or retained id remembered`
		if !errors.Is(err, admin.ErrQueueInUse) || err.Error() != want {
			t.Fatalf("ForgetQueue = %v\nwant %s", err, want)
		}
		if s := workertest.Stats(t, c, "kept"); s.Scheduled != 1 || s.Ready != 1 || !s.Paused {
			t.Errorf("stats after the refusal: %+v; want both jobs, paused", s)
		}
		var ve *worker.ValidationError
		if err := c.Forget(ctx, "bad{name}"); !errors.As(err, &ve) {
			t.Errorf("ForgetQueue with a bad name: %v; want a *ValidationError", err)
		}
	})
}

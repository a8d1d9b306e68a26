package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// TestLateCancelMessageSparesALaterRun: the message that tells a daemon a
// running job was cancelled names the claim it cancelled, so a message
// that arrives late (here: the first run's message, sent again while the
// requeued job runs a second time) ends nothing but that claim's run
// (issue 29, item 11a). A message without a claim, as daemons before it
// send, still ends whatever run of the id the daemon holds.
func TestLateCancelMessageSparesALaterRun(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix) // lease 300ms
		const queue, id = "cq", "c1"
		started := make(chan struct{}, 4)
		ended := make(chan error, 4)
		release := make(chan struct{})
		h := func(ctx context.Context, _ *worker.Job) error {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			ended <- context.Cause(ctx)
			return ctx.Err()
		}
		reg := register(t, nil, queue, worker.HandlerFunc(h), worker.QueueOptions{})
		c := newClient(t, rdb, cfg)

		// Listen on the queue's wake channel, as the daemon does.
		channel := strings.TrimSuffix(rediskeys.QueueKeys(prefix, queue).Jobs, "jobs") + "wake"
		messages := make(chan string, 16)
		subscribed := make(chan struct{}, 1)
		subCtx, unsubscribe := context.WithCancel(t.Context())
		t.Cleanup(unsubscribe)
		hooked := rueidis.WithOnSubscriptionHook(subCtx, func(rueidis.PubSubSubscription) {
			select {
			case subscribed <- struct{}{}:
			default:
			}
		})
		go func() {
			_ = rdb.Receive(hooked, rdb.B().Ssubscribe().Channel(channel).Build(), func(m rueidis.PubSubMessage) {
				if strings.HasPrefix(m.Message, "cancel") {
					messages <- m.Message
				}
			})
		}()
		receive(t, subscribed, 10*time.Second, "the test's subscription")

		startDaemon(t, rdb, reg, cfg)
		enqueue(t, c, worker.JobSpec{Queue: queue, ID: id})
		receive(t, started, 10*time.Second, "the first run")
		if err := c.Cancel(t.Context(), queue, id); err != nil {
			t.Fatal(err)
		}
		first := receive(t, messages, 10*time.Second, "the cancel's message")
		if err := receive(t, ended, 10*time.Second, "the first run's end"); !errors.Is(err, worker.ErrCancelled) {
			t.Fatalf("the first run ended with %v, want ErrCancelled", err)
		}
		if n, err := c.RequeueCancelled(t.Context(), queue, id); err != nil || n != 1 {
			t.Fatalf("Requeue = %d, %v", n, err)
		}
		receive(t, started, 10*time.Second, "the second run")

		publish := func(msg string) {
			t.Helper()
			testkit.Do(t, rdb, rdb.B().Spublish().Channel(channel).Message(msg).Build())
		}
		publish(first) // the first run's cancel, late
		select {
		case err := <-ended:
			t.Fatalf("the first run's cancel message (%q) ended the second run: %v", first, err)
		case <-time.After(3 * cfg.Lease): // renewals go on meanwhile
		}

		publish("cancel:" + id) // a daemon of the version before: no claim
		if err := receive(t, ended, 10*time.Second, "the second run's end"); !errors.Is(err, worker.ErrCancelled) {
			t.Errorf("after a cancel message without a claim, the second run ended with %v; want ErrCancelled", err)
		}
		close(release)
	})
}

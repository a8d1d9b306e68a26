package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Scripts is what the contract drives: the job scripts as *store.Store runs
// them on Redis and Fake imitates them.
type Scripts interface {
	Enqueue(ctx context.Context, queue string, jobs []store.NewJob) ([]bool, error)
	ClaimLimited(ctx context.Context, queue string, n int, lease time.Duration, limit store.Rate) (store.Claimed, error)
	Ack(ctx context.Context, queue string, toks []store.Token) (int, error)
	Complete(ctx context.Context, queue string, done []store.Completion) (int, error)
	Retry(ctx context.Context, queue string, tok store.Token, delay time.Duration, errText string) (bool, error)
	Kill(ctx context.Context, queue string, tok store.Token, errText string) (bool, error)
	Snooze(ctx context.Context, queue string, toks []store.Token, delay time.Duration) (int, error)
	Extend(ctx context.Context, byQueue map[string][]store.Renewal, lease time.Duration) (map[string][]store.Lost, error)
	Recover(ctx context.Context, queue, leader string, limit, defaultMax int) (store.Recovered, error)
	Cancel(ctx context.Context, queue, id string) (store.CancelResult, error)
	Requeue(ctx context.Context, queue string, from store.Set, ids []string) ([]bool, error)
	Get(ctx context.Context, queue, id string) (store.Snapshot, error)
	Subscribe(ctx context.Context, queues []string, onWake func(queue string, runAtMs int64), onCancel func(queue string, tok store.Token), onSubscribed func()) error
	Pause(ctx context.Context, queue string) (bool, error)
	Resume(ctx context.Context, queue string) (bool, error)
	Paused(ctx context.Context, queue string) (bool, error)
}

// Backend is one store the contract runs against.
type Backend interface {
	Scripts
	// Lead makes the test the leader of queue and returns the leader field
	// that the fenced Recover checks.
	Lead(t *testing.T, queue string) (field string)
	// Checkpoint remembers every key of queue and returns a function that
	// restores them, as Redis restores its data when it loses the writes
	// made since (a crash under appendfsync everysec, an asynchronous
	// failover, a restore from a backup).
	Checkpoint(t *testing.T, queue string) (rollBack func())
}

var _ Backend = (*Fake)(nil)

// contractCase is one case of the contract: it gets an empty backend of its
// own.
type contractCase struct {
	name string
	run  func(k *kit)
}

// contract is the one table of cases every Backend must pass.
func contract() []contractCase {
	return []contractCase{
		{"enqueue", testEnqueue},
		{"claim", testClaim},
		{"rate limit", testRateLimit},
		{"ack", testAck},
		{"complete", testComplete},
		{"stale token", testStaleToken},
		{"rollback", testRollback},
		{"reused id", testReusedID},
		{"snooze", testSnooze},
		{"retry", testRetry},
		{"extend", testExtend},
		{"lease lost", testLeaseLost},
		{"bad progress report", testBadReport},
		{"cancel", testCancel},
		{"dead", testDead},
		{"requeue", testRequeue},
		{"wake", testWake},
		{"pause", testPause},
		{"pause keeps running jobs", testPauseRunning},
	}
}

// RunContract runs the contract's cases as parallel subtests of t, each on
// a backend of its own from newBackend (on Redis: a key prefix of its own).
//
// Times come from the backend's clock (Claimed.Now, Snapshot.Now), which
// for Redis is the server's, and are asserted as bounds or orderings, so one
// table passes on every backend. The lease-lost cases wait out a 50ms lease
// in real time.
func RunContract(t *testing.T, newBackend func(t *testing.T) Backend) {
	for _, c := range contract() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(&kit{t: t, b: newBackend(t)})
		})
	}
}

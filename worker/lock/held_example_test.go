package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/lock"
)

// A lock with a fixed lease, never renewed: it is gone from Redis when the
// lease runs out, and the hold's context ends a margin before, with
// ErrLockExpired. Fit for a bounded task that must not outlive its lease.
// (Compiled, not run: it needs a Redis.)
func ExampleHeld_Context() {
	ctx := context.Background()
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rdb.Close()
	locks, err := lock.NewClient(rdb, lock.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer locks.Close()

	h, err := locks.Acquire(ctx, "cache-warmup", "warmer-1", lock.AcquireOptions{Lease: 10 * time.Second})
	if err != nil {
		fmt.Println(err) // lock.ErrNotAcquired: another holder has it
		return
	}
	defer h.Release(context.WithoutCancel(ctx))
	<-h.Context().Done() // the work would watch this context
	if errors.Is(context.Cause(h.Context()), lock.ErrLockExpired) {
		fmt.Println("the lease ran out: stop")
	}
}

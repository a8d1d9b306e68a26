package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/lock"
)

// Acquire a lock in watchdog mode, waiting up to 10s for it, and run the
// guarded work under the hold's context, which ends if the lock is lost.
// (Compiled, not run: it needs a Redis.)
func ExampleClient_Acquire() {
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

	h, err := locks.Acquire(ctx, "reports:{2024-06}", "monthly-report", lock.AcquireOptions{Wait: 10 * time.Second})
	if errors.Is(err, lock.ErrNotAcquired) {
		fmt.Println("another process is writing the report")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Release(context.WithoutCancel(ctx))

	select {
	case <-h.Context().Done(): // lost or expired: stop acting as the owner
		fmt.Println("stopped:", context.Cause(h.Context()))
	case <-time.After(time.Second): // the guarded work
		fmt.Println("report written")
	}
}

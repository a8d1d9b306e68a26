package lock_test

import (
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker/lock"
)

// The unlock message of a lock goes out on Redisson's channel, so a Java
// service waiting with Redisson's getLock(name) wakes up too. A name with
// a hash tag keeps it in its channel, which stays in the lock's slot.
func ExampleChannel() {
	fmt.Println(lock.Channel("invoice:42"))
	fmt.Println(lock.Channel("reports:{2024-06}"))
	// Output:
	// redisson_lock__channel:{invoice:42}
	// redisson_lock__channel:reports:{2024-06}
}

// A hold ends here Margin(lease) before its key may expire in Redis, so a
// holder that stopped renewing stops acting as the owner before another
// process can take the lock.
func ExampleMargin() {
	for _, lease := range []time.Duration{30 * time.Second, 3 * time.Second, 100 * time.Millisecond} {
		fmt.Printf("lease %s: ends %s early\n", lease, lock.Margin(lease))
	}
	// Output:
	// lease 30s: ends 3s early
	// lease 3s: ends 300ms early
	// lease 100ms: ends 50ms early
}

package lock_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// BenchmarkAcquireRelease is one uncontended Acquire and Release: two
// script round trips.
func BenchmarkAcquireRelease(b *testing.B) {
	c := newClient(b, testkit.Single(b), lock.Options{})
	name := testkit.Prefix(b)
	for b.Loop() {
		h := acquire(b, c, name, "bench", lock.AcquireOptions{})
		release(b, h)
	}
}

// BenchmarkAcquireReleaseParallel runs uncontended pairs on distinct locks
// from many goroutines; rueidis pipelines them. ns/op is per pair, over all
// goroutines.
func BenchmarkAcquireReleaseParallel(b *testing.B) {
	c := newClient(b, testkit.Single(b), lock.Options{})
	prefix := testkit.Prefix(b)
	var n atomic.Int64
	b.SetParallelism(8) // 8 goroutines per CPU
	b.RunParallel(func(pb *testing.PB) {
		name := fmt.Sprintf("%s:%d", prefix, n.Add(1))
		for pb.Next() {
			h := acquire(b, c, name, "bench", lock.AcquireOptions{})
			release(b, h)
		}
	})
}

// TestAcquireReleaseRoundTrip logs what an uncontended Acquire + Release
// costs on the test Redis; it asserts nothing about speed.
func TestAcquireReleaseRoundTrip(t *testing.T) {
	t.Parallel()
	c := newClient(t, testkit.Single(t), lock.Options{})
	name := testkit.Prefix(t)
	const n = 200
	took := make([]time.Duration, n)
	for i := range took {
		start := time.Now()
		release(t, acquire(t, c, name, "h", lock.AcquireOptions{}))
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	t.Logf("Acquire+Release over %d runs: median %v, p99 %v", n, took[n/2], took[n*99/100])
}

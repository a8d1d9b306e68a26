package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// BenchmarkScripts measures one script call per op over batches of jobs, so
// ns/op divided by the batch is the per-job cost (client and server time on
// one machine). Run: go test -run XXX -bench Scripts ./worker/internal/store/
func BenchmarkScripts(b *testing.B) {
	for _, batch := range []int{1, 64, 1000} {
		b.Run(fmt.Sprintf("enqueue/%d", batch), func(b *testing.B) {
			s := store.New(testkit.Single(b), testkit.Prefix(b), nil)
			ctx := context.Background()
			payload := make([]byte, 100)
			n := 0
			for b.Loop() {
				jobs := make([]store.NewJob, batch)
				for i := range jobs {
					n++
					jobs[i] = store.NewJob{ID: fmt.Sprint(n), Payload: payload}
				}
				if _, err := s.Enqueue(ctx, "q", jobs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/job")
		})
		b.Run(fmt.Sprintf("claim+ack/%d", batch), func(b *testing.B) {
			s := store.New(testkit.Single(b), testkit.Prefix(b), nil)
			ctx := context.Background()
			payload := make([]byte, 100)
			total := b.N * batch
			for start := 0; start < total; start += 10000 {
				jobs := make([]store.NewJob, min(10000, total-start))
				for i := range jobs {
					jobs[i] = store.NewJob{ID: fmt.Sprint(start + i), Payload: payload}
				}
				if _, err := s.Enqueue(ctx, "q", jobs); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			n := 0
			for range b.N {
				c, err := s.Claim(ctx, "q", batch, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				toks := make([]store.Token, len(c.Jobs))
				for i := range c.Jobs {
					toks[i] = c.Jobs[i].Token()
				}
				if _, err := s.Ack(ctx, "q", toks); err != nil {
					b.Fatal(err)
				}
				n += len(toks)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(n, 1)), "ns/job")
		})
	}
}

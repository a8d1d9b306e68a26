package worker

import (
	"context"
	"log/slog"
	"testing"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// BenchmarkExecutor measures the per-job cost of running a no-op handler:
// the job value, its timeout context, the handler goroutine and the outcome.
func BenchmarkExecutor(b *testing.B) {
	reg := NewRegistry()
	if err := reg.Register("q", HandlerFunc(func(context.Context, *Job) error { return nil }), QueueOptions{}); err != nil {
		b.Fatal(err)
	}
	r, _ := reg.lookup("q")
	exec := executor("q", r, execEnv{log: slog.New(slog.DiscardHandler), maxResult: MaxResultBytesDefault})
	rec := store.Record{ID: "01JD0000000000000000000000", Claim: 1, Attempt: 1, Payload: make([]byte, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		exec(ctx, &rec)
	}
}

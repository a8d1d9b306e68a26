package workertest

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Logger logs warnings and errors to the test's output, until the test's
// cleanup: a daemon's goroutine that logs after the test ended (a lock's
// late undo) writes nowhere rather than race the test's end.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(untilCleanup(t), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// cutOff is a writer that goes to w until it is cut off, then nowhere.
type cutOff struct {
	mu sync.Mutex
	w  io.Writer
}

func (c *cutOff) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return len(p), nil
	}
	return c.w.Write(p)
}

// untilCleanup is t's output until t's cleanup.
func untilCleanup(t testing.TB) io.Writer {
	c := &cutOff{w: t.Output()}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.w = nil
	})
	return c
}

// Config is the Config the integration tests start from: short lease,
// quick recovery, a shutdown timeout that keeps cleanups short. The safety
// poll is an hour, so a job that starts at all was started by a claim after
// a wake-up message, the head timer or a freed slot, never by polling.
func Config(t testing.TB, prefix string) worker.Config {
	return worker.Config{
		Prefix:          prefix,
		Lease:           300 * time.Millisecond,
		PollInterval:    time.Hour,
		ShutdownTimeout: 2 * time.Second,
		RecoverInterval: 100 * time.Millisecond,
		Logger:          Logger(t),
	}
}

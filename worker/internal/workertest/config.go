package workertest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Logger logs warnings and errors to the test's output.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
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

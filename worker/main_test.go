package worker_test

import (
	"bytes"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

// TestMain stops the Redis servers testkit starts, once every test of the
// binary (package worker and package worker_test alike) is done. Started as
// a crash test's child process, it runs that child's daemon instead.
func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild())
	}
	testkit.Main(m)
}

// The integration-test harness is workertest's; these names keep the tests
// short.
type (
	client   = workertest.Client
	daemon   = workertest.Daemon
	recorder = workertest.Recorder
)

const clockSlack = workertest.ClockSlack

var (
	backends       = workertest.Backends
	forEachBackend = workertest.ForEachBackend
	testLogger     = workertest.Logger
	testConfig     = workertest.Config
	newClient      = workertest.NewClient
	enqueue        = workertest.Enqueue
	getJob         = workertest.GetJob
	isGone         = workertest.IsGone
	inState        = workertest.InState
	stats          = workertest.Stats
	startDaemon    = workertest.StartDaemon
	register       = workertest.Register
	newRecorder    = workertest.NewRecorder
	listAll        = workertest.ListAll
	jobIDs         = workertest.JobIDs
	within         = workertest.Within
	allBytes       = workertest.AllBytes
	checkInvalid   = workertest.CheckInvalid
	succeed        = workertest.Succeed
)

// receive is workertest.Receive.
func receive[T any](t testing.TB, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	return workertest.Receive(t, ch, within, what)
}

// second is workertest.Second.
func second[T any](v T, err error) error { return workertest.Second(v, err) }

// syncBuffer is a bytes.Buffer safe for concurrent writes, for log output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	tee io.Writer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tee != nil {
		_, _ = b.tee.Write(p)
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

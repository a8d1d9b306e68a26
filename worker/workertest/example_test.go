package workertest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/workertest"
)

// Resize is the payload of the handler the examples test.
type Resize struct {
	Image string `json:"image"`
	Width int    `json:"width"`
}

// resize reports its progress and sets its result, as a handler does.
func resize(_ context.Context, job *worker.Job, r Resize) error {
	if r.Width <= 0 {
		return worker.Permanent(fmt.Errorf("width %d", r.Width))
	}
	if err := job.ReportProgress(50, "decoded"); err != nil {
		return err
	}
	return job.SetResult(fmt.Appendf(nil, `{"url":"https://cdn.example.com/%d/%s"}`, r.Width, r.Image))
}

// t stands for the *testing.T of the test that the code of an example
// belongs in.
var t testing.TB = &exampleT{}

// Run runs a handler on a job as a Daemon would, and shows what it did.
func ExampleRun() {
	out := workertest.Run(t, worker.JSONHandler(resize), workertest.JSON(t, Resize{Image: "cat.png", Width: 640}))
	fmt.Println(out.Outcome, out.Err)
	fmt.Println(out.Progress[0].Percent, out.Progress[0].Message)
	fmt.Println(workertest.ResultJSON[map[string]string](t, out)["url"])
	// Output:
	// done <nil>
	// 50 decoded
	// https://cdn.example.com/640/cat.png
}

// Run classifies a failure as the daemon does: here, a permanent one.
func ExampleRun_failure() {
	out := workertest.Run(t, worker.JSONHandler(resize), workertest.JSON(t, Resize{Image: "cat.png"}))
	var perm *worker.PermanentError
	fmt.Println(out.Outcome, errors.As(out.Err, &perm))
	// Output:
	// dead true
}

// RequireEnqueued checks what the code under test enqueued, read back
// from the in-memory store.
func ExampleRequireEnqueued() {
	s := workertest.New(t)
	// The code under test:
	_, _ = s.Client().Enqueue(t.Context(), worker.JobSpec{
		Queue: "images", Payload: []byte(`{"image":"cat.png","width":640}`), Delay: time.Minute,
	})

	r, job := workertest.RequireEnqueued[Resize](t, s, workertest.Queue("images"),
		workertest.Payload(func(r Resize) bool { return r.Width == 640 }),
		workertest.RunAt(s.Now().Add(time.Minute)))
	fmt.Println(r.Image, job.State)
	workertest.RequireNotEnqueued(t, s, workertest.Queue("thumbnails"))
	// Output:
	// cat.png scheduled
}

// Drain runs what is due with the registry's handlers on a real Daemon;
// Advance moves the store's clock to the next retry.
func ExampleStore_Drain() {
	s := workertest.New(t)
	reg := worker.NewRegistry()
	failures := 1
	_ = reg.Register("images", worker.JSONHandler(func(ctx context.Context, job *worker.Job, r Resize) error {
		if failures > 0 {
			failures--
			return errors.New("storage unavailable")
		}
		return resize(ctx, job, r)
	}), worker.QueueOptions{Backoff: worker.FixedSteps{time.Minute}})
	_, _ = s.Client().Enqueue(t.Context(), worker.JobSpec{Queue: "images", Payload: []byte(`{"image":"cat.png","width":640}`)})

	d := s.Drain(t, reg)
	fmt.Println(d.Attempts[0].Outcome, d.Attempts[0].Delay)
	s.Advance(d.Attempts[0].Delay)
	d = s.Drain(t, reg)
	fmt.Println(d.Attempts[0].Outcome, d.Attempts[0].Job.Attempt)
	// Output:
	// retried 1m0s
	// done 2
}

// exampleT is the t of the examples, which run outside any test: it
// fails by panicking, and its cleanups run when the test binary's tests
// and examples are done (TestMain).
type exampleT struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
}

var exampleCtx, endExamples = context.WithCancel(context.Background())

func (*exampleT) Helper()                  {}
func (*exampleT) Name() string             { return "Example" }
func (*exampleT) Context() context.Context { return exampleCtx }
func (*exampleT) Output() io.Writer        { return io.Discard }
func (*exampleT) Errorf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}
func (e *exampleT) Fatalf(format string, args ...any) { e.Errorf(format, args...) }

func (e *exampleT) Cleanup(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cleanups = append(e.cleanups, f)
}

// TestMain runs the tests and examples, then the examples' cleanups.
func TestMain(m *testing.M) {
	code := m.Run()
	endExamples()
	e := t.(*exampleT)
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	os.Exit(code)
}

package admin_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestMain stops the Redis servers testkit starts, once every test of the
// binary is done.
func TestMain(m *testing.M) { testkit.Main(m) }

// backends are the Redis deployments the integration tests run against.
var backends = []struct {
	name    string
	connect func(testing.TB) rueidis.Client
}{
	{"single", testkit.Single},
	{"cluster", testkit.Cluster},
}

// forEachBackend runs f as parallel subtests "single" and "cluster", each
// with its own Redis client and key prefix.
func forEachBackend(t *testing.T, f func(t *testing.T, rdb rueidis.Client, prefix string)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, b.connect(t), testkit.Prefix(t))
		})
	}
}

// receive waits up to within for a value on ch.
func receive[T any](t testing.TB, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("waited %s for %s", within, what)
	}
	panic("unreachable")
}

// testLogger logs warnings and errors to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// testConfig is the Config the integration tests start from: short lease,
// quick recovery, a shutdown timeout that keeps cleanups short. The safety
// poll is an hour, so a job that starts at all was started by a claim after
// a wake-up message, the head timer or a freed slot, never by polling.
func testConfig(t testing.TB, prefix string) worker.Config {
	return worker.Config{
		Prefix:          prefix,
		Lease:           300 * time.Millisecond,
		PollInterval:    time.Hour,
		ShutdownTimeout: 2 * time.Second,
		RecoverInterval: 100 * time.Millisecond,
		Logger:          testLogger(t),
	}
}

// client is what a test drives: the application's Client, with the
// operator's verbs of an admin.Client on the same Redis and Config, so a
// test enqueues and looks through one value.
type client struct {
	*worker.Client
	op *admin.Client
}

func newClient(t testing.TB, rdb rueidis.Client, cfg worker.Config) *client {
	t.Helper()
	c, err := worker.NewClient(rdb, cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	op, err := admin.NewClient(rdb, cfg)
	if err != nil {
		t.Fatalf("admin.NewClient: %v", err)
	}
	return &client{Client: c, op: op}
}

func (c *client) Stats(ctx context.Context, queue string) (admin.QueueStats, error) {
	return c.op.Stats(ctx, queue)
}
func (c *client) Cancel(ctx context.Context, queue, id string) error {
	return c.op.Cancel(ctx, queue, id)
}
func (c *client) Pause(ctx context.Context, queue string) error  { return c.op.Pause(ctx, queue) }
func (c *client) Resume(ctx context.Context, queue string) error { return c.op.Resume(ctx, queue) }
func (c *client) Fleet(ctx context.Context, queue string) (admin.Fleet, error) {
	return c.op.Fleet(ctx, queue)
}
func (c *client) Forget(ctx context.Context, queue string) error { return c.op.Forget(ctx, queue) }
func (c *client) Jobs(ctx context.Context, p admin.JobListParams) (admin.JobPage, error) {
	return c.op.Jobs(ctx, p)
}
func (c *client) Triage(ctx context.Context, p admin.TriageParams) (admin.TriageResult, error) {
	return c.op.Triage(ctx, p)
}
func (c *client) Queues(ctx context.Context, p admin.QueueListParams) (admin.QueuePage, error) {
	return c.op.Queues(ctx, p)
}
func (c *client) History(ctx context.Context, queue string, from, to time.Time) ([]admin.HistoryMinute, error) {
	return c.op.History(ctx, queue, from, to)
}

func (c *client) Periodic(ctx context.Context, queue string) ([]admin.PeriodicStatus, error) {
	return c.op.Periodic(ctx, queue)
}

// allQueues lists every known queue, page after page.
func (c *client) allQueues(ctx context.Context) ([]string, error) {
	var names []string
	p := admin.QueueListParams{Limit: admin.QueuesPerPageMax}
	for {
		page, err := c.op.Queues(ctx, p)
		if err != nil {
			return nil, err
		}
		names = append(names, page.Names...)
		if p.Cursor = page.Next; p.Cursor == "" {
			return names, nil
		}
	}
}

func (c *client) CheckPrefix(ctx context.Context) error { return c.op.CheckPrefix(ctx) }

// requeueAll requeues every dead job of queue and returns how many moved.
func (c *client) requeueAll(ctx context.Context, queue string) (int, error) {
	res, err := c.op.Triage(ctx, admin.TriageParams{Queue: queue, Action: admin.TriageRequeue})
	return res.Changed, err
}

// purgeAll deletes every dead job of queue and returns how many went.
func (c *client) purgeAll(ctx context.Context, queue string) (int, error) {
	res, err := c.op.Triage(ctx, admin.TriageParams{Queue: queue, Action: admin.TriagePurge})
	return res.Changed, err
}

// purge deletes the dead jobs ids of queue and returns how many went.
func (c *client) purge(ctx context.Context, queue string, ids ...string) (int, error) {
	res, err := c.op.Triage(ctx, admin.TriageParams{Queue: queue, Action: admin.TriagePurge, IDs: ids})
	return res.Changed, err
}

// enqueue adds one job and fails the test on an error.
func enqueue(t testing.TB, c *client, spec worker.JobSpec) string {
	t.Helper()
	id, err := c.Enqueue(t.Context(), spec)
	if err != nil {
		t.Fatalf("Enqueue(%+v): %v", spec, err)
	}
	return id
}

// getJob reads a job and fails the test on an error.
func getJob(t testing.TB, c *client, queue, id string) *worker.Job {
	t.Helper()
	job, err := c.Get(t.Context(), queue, id)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", queue, id, err)
	}
	return job
}

// isGone reports whether the job no longer exists; other errors fail the test.
func isGone(t testing.TB, c *client, queue, id string) bool {
	t.Helper()
	_, err := c.Get(t.Context(), queue, id)
	if err != nil && !errors.Is(err, worker.ErrNotFound) {
		t.Fatalf("Get(%q, %q): %v", queue, id, err)
	}
	return err != nil
}

// inState reports whether the job exists and is in state.
func inState(t testing.TB, c *client, queue, id string, state worker.State) bool {
	t.Helper()
	job, err := c.Get(t.Context(), queue, id)
	if errors.Is(err, worker.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", queue, id, err)
	}
	return job.State == state
}

func stats(t testing.TB, c *client, queue string) admin.QueueStats {
	t.Helper()
	s, err := c.Stats(t.Context(), queue)
	if err != nil {
		t.Fatalf("Stats(%q): %v", queue, err)
	}
	return s
}

// daemon is a Daemon running in the background of a test.
type daemon struct {
	*worker.Daemon
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

// startDaemon runs a Daemon for reg until stop or the end of the test.
func startDaemon(t testing.TB, rdb rueidis.Client, reg *worker.Registry, cfg worker.Config) *daemon {
	t.Helper()
	d, err := worker.NewDaemon(rdb, reg, cfg)
	if err != nil {
		t.Fatalf("NewDaemon: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rd := &daemon{Daemon: d, cancel: cancel, done: make(chan error, 1)}
	go func() { rd.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		if !rd.stopped {
			if err := rd.stop(t, 15*time.Second); err != nil {
				t.Errorf("Daemon.Run: %v", err)
			}
		}
	})
	return rd
}

// stop cancels Run's context and returns Run's result, failing the test when
// Run takes longer than within to return.
func (d *daemon) stop(t testing.TB, within time.Duration) error {
	t.Helper()
	d.stopped = true
	d.cancel()
	select {
	case err := <-d.done:
		return err
	case <-time.After(within):
		t.Fatalf("Daemon.Run did not return within %s of its context ending", within)
		return nil
	}
}

// register adds a handler to a new or given registry and fails on an error.
func register(t testing.TB, reg *worker.Registry, queue string, h worker.Handler, opts worker.QueueOptions) *worker.Registry {
	t.Helper()
	if reg == nil {
		reg = worker.NewRegistry()
	}
	if err := reg.Register(queue, h, opts); err != nil {
		t.Fatalf("Register(%q): %v", queue, err)
	}
	return reg
}

// call is what a handler saw in one attempt.
type call struct {
	ID          string
	Payload     string
	Attempt     int
	MaxAttempts int
	Timeout     time.Duration
	LastError   string
	RunAt       time.Time
	Start, End  time.Time
	Cause       error // context.Cause of the handler's context when it returned
	Err         error // what the handler returned
}

// recorder wraps handlers and keeps every attempt they ran, by job id.
type recorder struct {
	mu    sync.Mutex
	calls map[string][]call
	total int
}

func newRecorder() *recorder { return &recorder{calls: make(map[string][]call)} }

// handler returns a Handler that records each attempt of f.
func (r *recorder) handler(f func(ctx context.Context, job *worker.Job) error) worker.HandlerFunc {
	return func(ctx context.Context, job *worker.Job) error {
		c := call{
			ID: job.ID, Payload: string(job.Payload), Attempt: job.Attempt, MaxAttempts: job.MaxAttempts,
			Timeout: job.Timeout, LastError: job.LastError, RunAt: job.RunAt, Start: time.Now(),
		}
		defer func() {
			c.End = time.Now()
			c.Cause = context.Cause(ctx)
			r.mu.Lock()
			r.calls[c.ID] = append(r.calls[c.ID], c)
			r.total++
			r.mu.Unlock()
		}()
		c.Err = f(ctx, job)
		return c.Err
	}
}

// of returns the attempts recorded for id so far.
func (r *recorder) of(id string) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls[id]...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// listAll reads every page of q, and the size of each.
func listAll(t testing.TB, c *client, q admin.JobListParams) (jobs []*worker.Job, sizes []int) {
	t.Helper()
	for range 1000 {
		page, err := c.Jobs(t.Context(), q)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", q, err)
		}
		jobs = append(jobs, page.Jobs...)
		sizes = append(sizes, len(page.Jobs))
		if page.Next == "" {
			return jobs, sizes
		}
		q.Cursor = page.Next
	}
	t.Fatalf("Jobs(%+v) did not end", q)
	return nil, nil
}

func jobIDs(jobs []*worker.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// clockSlack allows for the Redis clock being read a little before or after
// the local one, and for millisecond rounding.
const clockSlack = 25 * time.Millisecond

// within fails unless lo-clockSlack <= got <= hi+clockSlack.
func within(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo.Add(-clockSlack)) || got.After(hi.Add(clockSlack)) {
		t.Errorf("%s = %s, want within [%s, %s] (±%s)", what,
			got.Format(time.StampMilli), lo.Format(time.StampMilli), hi.Format(time.StampMilli), clockSlack)
	}
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// second returns the error of a two-value call.
func second[T any](_ T, err error) error { return err }

func succeed(context.Context, *worker.Job) error { return nil }

// checkInvalid fails unless err is a validation error of field whose message
// contains where.
func checkInvalid(t *testing.T, err error, field, where string) {
	t.Helper()
	if !errors.Is(err, worker.ErrInvalid) {
		t.Fatalf("err = %v, want one wrapping ErrInvalid", err)
	}
	var ve *worker.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want a *ValidationError", err, err)
	}
	if where != "" {
		field = where + "." + field // a batch names the spec: specs[2].Delay
	}
	if ve.Field != field {
		t.Errorf("ValidationError.Field = %q, want %q (err: %v)", ve.Field, field, err)
	}
	if !strings.Contains(err.Error(), where) {
		t.Errorf("err = %q, want it to name %q", err, where)
	}
}

package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Tokens of the test bundles.
const (
	producerSecret = "producer-secret-0123456789"
	adminSecret    = "admin-secret-0123456789abcdef"
)

// bundle is one test's API: a real HTTP server on a real Redis, under the
// test's own key prefix.
type bundle struct {
	t      *testing.T
	rdb    rueidis.Client
	calls  *countingClient
	prefix string
	client *admin.Client // the API's backend
	opts   Options
	h      *Handler
	srv    *httptest.Server
	logs   *testkit.Buffer
}

// setup starts an API with a producer and an admin token on single
// Redis; mutate adjusts the options first.
func setup(t *testing.T, mutate ...func(*Options)) *bundle {
	t.Helper()
	return setupOn(t, testkit.Single(t), mutate...)
}

// setupOn is setup on rdb (testkit.Cluster, for one).
func setupOn(t *testing.T, rdb rueidis.Client, mutate ...func(*Options)) *bundle {
	t.Helper()
	b := &bundle{t: t, rdb: rdb, prefix: testkit.Prefix(t), logs: &testkit.Buffer{}}
	b.calls = &countingClient{Client: b.rdb}
	client, err := admin.NewClient(b.calls, worker.Config{Prefix: b.prefix})
	if err != nil {
		t.Fatal(err)
	}
	b.client = client
	b.opts = Options{
		Backend: func() admin.Operator { return client },
		Tokens: []Token{
			{Name: "shop", Secret: producerSecret, Role: RoleProducer},
			{Name: "ops", Secret: adminSecret, Role: RoleAdmin},
		},
		Logger: slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, m := range mutate {
		m(&b.opts)
	}
	b.h, err = New(b.opts)
	if err != nil {
		t.Fatal(err)
	}
	b.h.hold = 0 // the tests' clocks are fake; TestThrottledHeld holds
	b.srv = httptest.NewServer(b.h)
	t.Cleanup(b.srv.Close)
	return b
}

// reply is a response as the tests read it.
type reply struct {
	status int
	header http.Header
	body   []byte
	closed bool // the server closes the connection after it
}

// json decodes the body into v, failing the test if it does not decode.
func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// apiErr returns the error of an error reply.
func (r reply) apiErr(t *testing.T) Error {
	t.Helper()
	var e struct{ Error Error }
	r.json(t, &e)
	return e.Error
}

// do sends a request with secret as its bearer token ("" for none).
func (b *bundle) do(method, path, secret, body string) reply {
	b.t.Helper()
	return b.send(b.request(method, path, secret, body))
}

// request builds the request do sends, for a test to add headers to.
func (b *bundle) request(method, path, secret, body string) *http.Request {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.srv.URL+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// send sends req to the bundle's server.
func (b *bundle) send(req *http.Request) reply {
	b.t.Helper()
	resp, err := b.srv.Client().Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data, closed: resp.Close}
}

// want checks a reply's status, failing with its body.
func (b *bundle) want(r reply, status int) reply {
	b.t.Helper()
	if r.status != status {
		b.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

// enqueue adds jobs through the Go client.
func (b *bundle) enqueue(specs ...worker.JobSpec) {
	b.t.Helper()
	res, err := b.client.Enqueue(b.t.Context(), specs)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			b.t.Fatal(r.Err)
		}
	}
}

// enqueueOne adds spec through op and returns its id and error as
// worker.Client.Enqueue does (and the CLI's enqueue reads them).
func enqueueOne(ctx context.Context, op admin.Operator, spec worker.JobSpec) (string, error) {
	res, err := op.Enqueue(ctx, []worker.JobSpec{spec})
	if err != nil {
		if len(res) == 1 {
			return res[0].ID, err
		}
		return "", err
	}
	return res[0].ID, res[0].Err
}

// run serves queue with handler h until the test ends.
func (b *bundle) run(queue string, h worker.HandlerFunc, opts worker.QueueOptions) {
	b.t.Helper()
	b.serve(queue, h, opts, worker.Config{})
}

// serve runs a daemon of queue with handler h under cfg (the bundle's
// prefix, a quick poll) until the test ends.
func (b *bundle) serve(queue string, h worker.HandlerFunc, opts worker.QueueOptions, cfg worker.Config) {
	b.t.Helper()
	b.serveHandler(queue, h, opts, cfg)
}

// serveHandler is serve with any handler (a worker.Kinds).
func (b *bundle) serveHandler(queue string, h worker.Handler, opts worker.QueueOptions, cfg worker.Config) {
	b.t.Helper()
	reg := worker.NewRegistry()
	if err := reg.Register(queue, h, opts); err != nil {
		b.t.Fatal(err)
	}
	cfg.Prefix, cfg.PollInterval, cfg.ShutdownTimeout = b.prefix, 20*time.Millisecond, time.Second
	cfg.Logger = slog.New(slog.DiscardHandler)
	d, err := worker.NewDaemon(b.rdb, reg, cfg)
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(b.t.Context()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(ctx)
	}()
	b.t.Cleanup(func() { cancel(); <-done })
}

// kill makes jobs with these ids on queue dead: a daemon fails each one
// permanently with "boom <id>".
func (b *bundle) kill(queue string, ids ...string) {
	b.t.Helper()
	for _, id := range ids {
		b.enqueue(worker.JobSpec{Queue: queue, ID: id, Payload: []byte(`{"n":1}`)})
	}
	reg := worker.NewRegistry()
	if err := reg.Register(queue, worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		return worker.Permanent(errors.New("boom " + j.ID))
	}), worker.QueueOptions{}); err != nil {
		b.t.Fatal(err)
	}
	d, err := worker.NewDaemon(b.rdb, reg, worker.Config{Prefix: b.prefix, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	testkit.Eventually(b.t, 10*time.Second, "every job dead", func() bool {
		for _, id := range ids {
			if j, err := b.client.Get(b.t.Context(), queue, id); err != nil || j.State != worker.StateDead {
				return false
			}
		}
		return true
	})
	cancel()
	if err := <-done; err != nil {
		b.t.Fatal(err)
	}
}

// snapshot returns every key of the test's prefix with its DUMP: what a
// refused request must leave unchanged.
func (b *bundle) snapshot() map[string]string {
	b.t.Helper()
	ctx := b.t.Context()
	out := map[string]string{}
	var cursor uint64
	for {
		e, err := b.rdb.Do(ctx, b.rdb.B().Scan().Cursor(cursor).Match(b.prefix+":*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			b.t.Fatal(err)
		}
		for _, k := range e.Elements {
			v, err := b.rdb.Do(ctx, b.rdb.B().Dump().Key(k).Build()).ToString()
			if err != nil {
				b.t.Fatalf("DUMP %s: %v", k, err)
			}
			out[k] = v
		}
		if cursor = e.Cursor; cursor == 0 {
			return out
		}
	}
}

// countingClient counts the round trips to Redis.
type countingClient struct {
	rueidis.Client
	n atomic.Int64
}

func (c *countingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c *countingClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.DoMulti(ctx, cmds...)
}

// fakeClock is an Options.Now that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// Now is the Options.Now of the clock.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

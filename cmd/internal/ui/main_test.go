package ui_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/ui"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The tokens of the test bundles.
const (
	adminSecret    = "admin-secret-0123456789abcdef"
	producerSecret = "producer-secret-0123456789"
	limitedSecret  = "limited-secret-0123456789"
)

// bundle is one test's UI, built as the daemon builds it: a real
// admin.Client on a real Redis under the test's own prefix, a real API
// handler, and the UI served by an httptest.Server.
type bundle struct {
	t      *testing.T
	rdb    rueidis.Client
	prefix string
	client *admin.Client
	api    *api.Handler
	ui     *ui.Handler
	srv    *httptest.Server
	clock  *clock
	logs   *testkit.Buffer
}

// config adjusts a bundle before it is built.
type config struct {
	rdb     rueidis.Client
	prefix  string // default: the test's own
	apiOpts func(*api.Options)
	uiOpts  func(*ui.Options)
	tls     bool
}

// setup builds a bundle on single Redis unless c says otherwise.
func setup(t *testing.T, c config) *bundle {
	t.Helper()
	b := &bundle{t: t, rdb: c.rdb, prefix: c.prefix, clock: &clock{}, logs: &testkit.Buffer{}}
	if b.prefix == "" {
		b.prefix = testkit.Prefix(t)
	}
	if b.rdb == nil {
		b.rdb = testkit.Single(t)
	}
	var client *admin.Client
	apiOpts := api.Options{
		Backend: func() admin.Operator { return client },
		Tokens: []api.Token{
			{Name: "ops", Secret: adminSecret, Role: api.RoleAdmin},
			{Name: "shop", Secret: producerSecret, Role: api.RoleProducer},
			{Name: "billing", Secret: limitedSecret, Role: api.RoleAdmin, Queues: []string{"billing"}},
		},
		Logger: slog.New(slog.NewTextHandler(b.logs, nil)),
	}
	if c.apiOpts != nil {
		c.apiOpts(&apiOpts)
	}
	// The payload limit is the library's, set from the same key as the
	// API's body size (jobs.max_payload_bytes), as the daemon does.
	client, err := admin.NewClient(b.rdb, worker.Config{Prefix: b.prefix, MaxPayloadBytes: apiOpts.Limits.MaxPayloadBytes})
	if err != nil {
		t.Fatal(err)
	}
	b.client = client
	if b.api, err = api.New(apiOpts); err != nil {
		t.Fatal(err)
	}
	rdb := b.rdb
	uiOpts := ui.Options{
		Backend:     func() ui.Backend { return client },
		API:         b.api,
		Revocations: ui.RedisRevocations(func() rueidis.Client { return rdb }, b.prefix),
		Logger:      slog.New(slog.NewTextHandler(b.logs, nil)),
		Now:         b.clock.Now,
	}
	if c.uiOpts != nil {
		c.uiOpts(&uiOpts)
	}
	if b.ui, err = ui.New(uiOpts); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", b.ui)
	mux.Handle("/v1/", b.api)
	if c.tls {
		b.srv = httptest.NewTLSServer(mux)
	} else {
		b.srv = httptest.NewServer(mux)
	}
	t.Cleanup(b.srv.Close)
	return b
}

// sibling is another daemon's UI beside b's: the same Redis, prefix and
// tokens, its own handlers and server (a second process behind a load
// balancer, or b's after a restart).
func (b *bundle) sibling() *bundle {
	b.t.Helper()
	return setup(b.t, config{rdb: b.rdb, prefix: b.prefix})
}

// clock is the UI's clock: the real one, moved ahead by advance.
type clock struct {
	mu    sync.Mutex
	ahead time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.ahead)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ahead += d
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects by itself (each test says whether to).
type browser struct {
	b    *bundle
	c    *http.Client
	csrf string // the last CSRF token seen on a page
}

// page is a response as the tests read it.
type page struct {
	status int
	header http.Header
	body   string
	url    *url.URL // after redirects, when followed
}

// newBrowser returns a browser of the bundle's server.
func (b *bundle) newBrowser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		b.t.Fatal(err)
	}
	c := b.srv.Client()
	return &browser{b: b, c: &http.Client{Transport: c.Transport, Jar: jar, Timeout: 30 * time.Second}}
}

// login logs in with secret, failing the test unless it works.
func (b *bundle) login(secret string) *browser {
	b.t.Helper()
	br := b.newBrowser()
	p := br.post("/ui/login", url.Values{"token": {secret}}, true)
	if p.url.Path != "/ui/" || p.status != http.StatusOK {
		b.t.Fatalf("login: %d at %s; body %s", p.status, p.url, p.body)
	}
	return br
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// do sends req, following redirects when follow is set.
func (br *browser) do(req *http.Request, follow bool) page {
	br.b.t.Helper()
	c := *br.c
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	resp, err := c.Do(req)
	if err != nil {
		br.b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		br.b.t.Fatal(err)
	}
	p := page{status: resp.StatusCode, header: resp.Header, body: string(data), url: resp.Request.URL}
	if m := csrfRE.FindStringSubmatch(p.body); m != nil {
		br.csrf = m[1]
	}
	return p
}

// get loads path, following redirects.
func (br *browser) get(path string) page {
	br.b.t.Helper()
	return br.do(br.request(http.MethodGet, path, nil), true)
}

// getNoFollow loads path without following a redirect.
func (br *browser) getNoFollow(path string) page {
	br.b.t.Helper()
	return br.do(br.request(http.MethodGet, path, nil), false)
}

// post submits form to path as a browser would.
func (br *browser) post(path string, form url.Values, follow bool) page {
	br.b.t.Helper()
	req := br.request(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return br.do(req, follow)
}

// submit posts form with the CSRF token of the last page seen, following
// the redirect.
func (br *browser) submit(path string, form url.Values) page {
	br.b.t.Helper()
	if br.csrf == "" {
		br.b.t.Fatal("no CSRF token seen yet: load a page first")
	}
	form.Set("csrf", br.csrf)
	return br.post(path, form, true)
}

func (br *browser) request(method, path string, body io.Reader) *http.Request {
	br.b.t.Helper()
	req, err := http.NewRequestWithContext(br.b.t.Context(), method, br.b.srv.URL+path, body)
	if err != nil {
		br.b.t.Fatal(err)
	}
	return req
}

// want fails the test unless p has status and holds every text.
func (p page) want(t *testing.T, status int, texts ...string) page {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d; body:\n%s", p.status, status, p.body)
	}
	for _, s := range texts {
		if !strings.Contains(p.body, s) {
			t.Fatalf("the page lacks %q; body:\n%s", s, p.body)
		}
	}
	return p
}

// flash returns the text of the page's flash of kind ("ok" or "error").
var flashRE = regexp.MustCompile(`(?s)<div class="flash (ok|error)" role="status">(.*?)</div>`)

func (p page) flash(t *testing.T, kind string) string {
	t.Helper()
	m := flashRE.FindStringSubmatch(p.body)
	if m == nil || m[1] != kind {
		t.Fatalf("no %s flash; body:\n%s", kind, p.body)
	}
	return m[2]
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

// kill makes jobs with these ids on queue dead, each failing for good
// with the error errs[id] (or "boom <id>").
func (b *bundle) kill(queue string, errs map[string]string, ids ...string) {
	b.t.Helper()
	for _, id := range ids {
		b.enqueue(worker.JobSpec{Queue: queue, ID: id, Payload: []byte(`{"n":1}`)})
	}
	stop := b.serve(queue, worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		if msg, ok := errs[j.ID]; ok {
			return worker.Permanent(errors.New(msg))
		}
		return worker.Permanent(errors.New("boom " + j.ID))
	}))
	defer stop()
	testkit.Eventually(b.t, 15*time.Second, "every job dead", func() bool {
		for _, id := range ids {
			if j, err := b.client.Get(b.t.Context(), queue, id); err != nil || j.State != worker.StateDead {
				return false
			}
		}
		return true
	})
}

// serve runs a daemon serving queue with h until stop (or the test's
// end).
func (b *bundle) serve(queue string, h worker.Handler, opts ...worker.QueueOptions) (stop func()) {
	b.t.Helper()
	return b.serveWith(worker.Config{}, queue, h, opts...)
}

// serveWith is serve with the daemon's Config cfg, whose Prefix,
// PollInterval, Logger and ShutdownTimeout it sets.
func (b *bundle) serveWith(cfg worker.Config, queue string, h worker.Handler, opts ...worker.QueueOptions) (stop func()) {
	b.t.Helper()
	reg := worker.NewRegistry()
	if err := reg.Register(queue, h, append(opts, worker.QueueOptions{})[0]); err != nil {
		b.t.Fatal(err)
	}
	cfg.Prefix, cfg.PollInterval, cfg.Logger, cfg.ShutdownTimeout = b.prefix, 20*time.Millisecond, slog.New(slog.DiscardHandler), time.Second
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
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	b.t.Cleanup(stop)
	return stop
}

// job reads a job, failing the test on an error.
func (b *bundle) job(queue, id string) *worker.Job {
	b.t.Helper()
	j, err := b.client.Get(b.t.Context(), queue, id)
	if err != nil {
		b.t.Fatalf("job %s: %v", id, err)
	}
	return j
}

func b64decode(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
func b64encode(p []byte) string          { return base64.RawURLEncoding.EncodeToString(p) }

package api

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// routeRequest is a request that reaches rt's backend call: a valid path,
// query and body.
func routeRequest(rt route) (path, body string) {
	path = strings.NewReplacer("{queue}", "q", "{id}", "j1", "{key}", "acme").Replace(rt.path)
	switch rt.method + " " + rt.path {
	case "GET /v1/queues/{queue}/jobs":
		path += "?state=dead&" + url.Values{"error": {"boom"}}.Encode()
	case "POST /v1/queues/{queue}/jobs":
		body = `{"payload": {"n": 1}}`
	case "POST /v1/queues/{queue}/jobs/batch":
		body = `{"jobs": [{}, {"id": "j2"}]}`
	case "POST /v1/queues/{queue}/dead/purge":
		body = `{"filter": {"error": "boom"}, "dry_run": true}`
	case "PUT /v1/queues/{queue}/keys/{key}":
		body = `{"concurrency": 2}`
	}
	return path, body
}

// TestRedisDown: while Redis hangs, and after it died (connections reset,
// new ones refused), every route that needs it answers 503 unavailable
// with Retry-After (none 500), and the log says Redis is unavailable.
func TestRedisDown(t *testing.T) { //nolint:tparallel // the phases run one after another, each on a Redis worse off
	t.Parallel()
	p := testkit.StartPrivate(t)
	proxy, proxied := testkit.StartProxyClient(t, p.Addr)
	newClient := func(rdb rueidis.Client) *admin.Client {
		c, err := admin.NewClient(rdb, worker.Config{Prefix: testkit.Prefix(t)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	direct := newClient(p.Client(t))
	var backend atomic.Pointer[admin.Client]
	backend.Store(newClient(proxied))
	logs := &testkit.Buffer{}
	h, err := New(Options{
		Backend: func() admin.Operator { return backend.Load() },
		Tokens:  []Token{{Name: "ops", Secret: adminSecret, Role: RoleAdmin}},
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
		// The work of a request ends 200ms before this: a hung Redis
		// answers 503 after 800ms.
		WriteTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, h)
	var routes []route
	for _, rt := range h.table() {
		if !rt.offline {
			routes = append(routes, rt)
		}
	}
	if len(routes) < 12 {
		t.Fatalf("only %d routes", len(routes))
	}
	check := func(t *testing.T, phase string, retryAfter ...string) {
		for _, rt := range routes {
			t.Run(phase+" "+rt.method+" "+rt.path, func(t *testing.T) {
				t.Parallel()
				path, body := routeRequest(rt)
				req, err := http.NewRequestWithContext(t.Context(), rt.method, srv.URL+path, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+adminSecret)
				start := time.Now()
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				r := reply{status: resp.StatusCode, header: resp.Header}
				var e struct{ Error wire.Error }
				err = json.NewDecoder(resp.Body).Decode(&e)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("status %d: %v", r.status, err)
				}
				ra := r.header.Get("Retry-After")
				if r.status != http.StatusServiceUnavailable || e.Error.Code != wire.CodeUnavailable || !slices.Contains(retryAfter, ra) {
					t.Errorf("status %d, %+v, Retry-After %q; want 503 unavailable with Retry-After %v", r.status, e.Error, ra, retryAfter)
				}
				if strings.Contains(e.Error.Message, p.Addr) {
					t.Errorf("the message names Redis's address: %q", e.Error.Message)
				}
				if d := time.Since(start); d > 3*time.Second {
					t.Errorf("took %s", d)
				}
			})
		}
	}

	// Hung: Redis is cut off (a partition, or a server that stopped
	// answering): every call waits past the requests' deadline, which is
	// most often the error (Retry-After 1); under load the client's own
	// i/o timeout can end a call first, an unreachable Redis (2).
	proxy.Stall()
	t.Run("hung", func(t *testing.T) { check(t, "hung", "1", "2") })
	// Dead: the connections through the proxy end, new ones are refused.
	p.Kill()
	proxy.Resume()
	t.Run("dropped", func(t *testing.T) { check(t, "dropped", "1", "2") })
	backend.Store(direct)
	t.Run("refused", func(t *testing.T) { check(t, "refused", "1", "2") })

	out := logs.String()
	if !strings.Contains(out, "Redis is unavailable") || strings.Contains(out, "api request failed") {
		t.Errorf("the log should say Redis is unavailable, and not that requests failed:\n%s", out)
	}
	t.Logf("a dead Redis, as the log tells it: %s", firstLine(out, "connection refused"))
}

// firstLine is the first line of text that holds word, or "".
func firstLine(text, word string) string {
	for line := range strings.Lines(text) {
		if strings.Contains(line, word) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

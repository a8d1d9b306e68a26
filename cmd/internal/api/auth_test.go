package api

import (
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	backend := func() admin.Operator { return nil }
	good := Token{Name: "a", Secret: adminSecret, Role: RoleAdmin}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no backend", Options{InsecureNoAuth: true}, "Backend"},
		{"no token", Options{Backend: backend}, "no token"},
		{"token and insecure", Options{Backend: backend, InsecureNoAuth: true, Tokens: []Token{good}}, "exclusive"},
		{"empty secret", Options{Backend: backend, Tokens: []Token{{Name: "a", Role: RoleAdmin}}}, "no secret"},
		{"no name", Options{Backend: backend, Tokens: []Token{{Secret: adminSecret, Role: RoleAdmin}}}, "no name"},
		{"same name", Options{Backend: backend, Tokens: []Token{good, {Name: "a", Secret: producerSecret, Role: RoleProducer}}}, "twice"},
		{"bad role", Options{Backend: backend, Tokens: []Token{{Name: "a", Secret: adminSecret, Role: "root"}}}, "role"},
		{"batch over the limit", Options{Backend: backend, InsecureNoAuth: true, Limits: Limits{MaxBatch: 1001}}, "MaxBatch"},
		{"bad rate limit", Options{Backend: backend, InsecureNoAuth: true, RateLimit: worker.RateLimit{N: 0, Per: time.Second}}, "RateLimit"},
		{"bad failed auth limit", Options{Backend: backend, Tokens: []Token{good}, FailedAuthLimit: worker.RateLimit{N: 5}}, "FailedAuthLimit"},
		{"bad queue", Options{Backend: backend, Tokens: []Token{{Name: "a", Secret: adminSecret, Role: RoleAdmin, Queues: []string{"a:b"}}}}, `token "a": invalid Queue: name "a:b"`},
		{"queue twice", Options{Backend: backend, Tokens: []Token{{Name: "a", Secret: adminSecret, Role: RoleAdmin, Queues: []string{"b", "c", "b"}}}}, `queue "b" twice`},
		{"allowed host with a port", Options{Backend: backend, InsecureNoAuth: true, AllowedHosts: []string{"courier.internal:9750"}}, "AllowedHosts"},
		{"allowed host as a URL", Options{Backend: backend, InsecureNoAuth: true, AllowedHosts: []string{"http://courier.internal"}}, "AllowedHosts"},
		{"empty allowed host", Options{Backend: backend, InsecureNoAuth: true, AllowedHosts: []string{""}}, "AllowedHosts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v; want an error about %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), adminSecret) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.kill("q", "d")
	// The producer enqueues, reads and cancels jobs; the admin does
	// everything.
	for _, tok := range []string{producerSecret, adminSecret} {
		b.want(b.do("POST", "/v1/queues/q/jobs", tok, `{"id": "by-`+tok[:5]+`"}`), 201)
		b.want(b.do("POST", "/v1/queues/q/jobs/batch", tok, `{"jobs": [{}]}`), 200)
		b.want(b.do("GET", "/v1/queues/q/jobs/d", tok, ""), 200)
		b.want(b.do("DELETE", "/v1/queues/q/jobs/by-"+tok[:5], tok, ""), 204)
	}
	admin := []struct{ method, path string }{
		{"GET", "/v1/queues"},
		{"GET", "/v1/queues/q"},
		{"GET", "/v1/queues/q/jobs?state=dead"},
		{"POST", "/v1/queues/q/dead/requeue"},
		{"POST", "/v1/queues/q/dead/purge"},
	}
	for _, rt := range admin {
		r := b.want(b.do(rt.method, rt.path, producerSecret, ""), 403)
		if e := r.apiErr(t); !strings.Contains(e.Message, `"shop"`) || !strings.Contains(e.Message, "admin") {
			t.Errorf("%s %s: %+v", rt.method, rt.path, e)
		}
		if r := b.do(rt.method, rt.path, adminSecret, ""); r.status >= 400 && r.status != 404 {
			t.Errorf("admin %s %s: %d %s", rt.method, rt.path, r.status, r.body)
		}
	}
	// Scheme case and extra spaces are tolerated; other schemes are not.
	for header, want := range map[string]int{
		"bearer " + adminSecret:  200,
		"Bearer  " + adminSecret: 200,
		"Basic " + adminSecret:   401,
		adminSecret:              401,
		"Bearer":                 401,
	} {
		req := b.srv.URL + "/v1/queues"
		r, err := newGet(t, req, header)
		if err != nil {
			t.Fatal(err)
		}
		if r != want {
			t.Errorf("Authorization %q: %d, want %d", strings.ReplaceAll(header, adminSecret, "<admin>"), r, want)
		}
	}
}

func TestInsecureNoAuth(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.Tokens, o.InsecureNoAuth = nil, true })
	b.want(b.do("POST", "/v1/queues/q/jobs", "", `{"id": "x"}`), 201)
	b.want(b.do("DELETE", "/v1/queues/q/jobs/x", "", ""), 204)
	b.want(b.do("GET", "/v1/queues", "anything-at-all-goes", ""), 200)
}

// TestRateLimit: each token has its own bucket of N requests, refilled at
// N per Per; a request beyond it gets 429 with Retry-After and changes
// nothing.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	b := setup(t, func(o *Options) {
		o.RateLimit = worker.RateLimit{N: 2, Per: 2 * time.Second}
		o.Now = clock
	})
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "1"}`), 201)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "2"}`), 201)
	before := b.snapshot()
	r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "3"}`), 429)
	if e := r.apiErr(t); e.Code != wire.CodeRateLimited || !strings.Contains(e.Message, `"shop"`) {
		t.Errorf("error %+v", e)
	}
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q, want 1 (one request refills in 1s)", ra)
	}
	if after := b.snapshot(); len(after) != len(before) {
		t.Error("a rate-limited request changed Redis")
	}
	// Another token has its own bucket.
	b.want(b.do("GET", "/v1/queues/q/jobs/1", adminSecret, ""), 200)
	advance(999 * time.Millisecond)
	b.want(b.do("GET", "/v1/queues/q/jobs/1", producerSecret, ""), 429)
	advance(time.Millisecond)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "3"}`), 201)
	// A long pause refills the bucket only up to its size.
	advance(time.Hour)
	for i := range 2 {
		b.want(b.do("GET", "/v1/queues/q/jobs/1", producerSecret, ""), 200)
		_ = i
	}
	b.want(b.do("GET", "/v1/queues/q/jobs/1", producerSecret, ""), 429)
	// Requests without a valid token do not spend anyone's budget.
	b.want(b.do("GET", "/v1/queues/q/jobs/1", "wrong-token-0123456789", ""), 401)
}

// TestTokensNeverLogged: tokens, right or wrong, appear in no log line,
// at debug level, whatever happens to the request.
func TestTokensNeverLogged(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.RateLimit = worker.RateLimit{N: 1, Per: time.Hour} })
	const wrong = "wrong-secret-9876543210"
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"payload": 1}`), 201)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"payload": 1}`), 429)
	b.want(b.do("GET", "/v1/queues", producerSecret, ""), 403)
	b.want(b.do("GET", "/v1/queues", adminSecret, ""), 200)
	b.want(b.do("GET", "/v1/queues", wrong, ""), 401)
	b.want(b.do("GET", "/v1/nope", wrong, ""), 401)
	b.want(b.do("POST", "/v1/queues/q/jobs", "", `{}`), 401)
	logs := b.logs.String()
	if !strings.Contains(logs, "token=shop") || !strings.Contains(logs, "token=ops") {
		t.Errorf("requests are not logged with their token's name:\n%s", logs)
	}
	for _, s := range []string{producerSecret, adminSecret, wrong, "secret-"} {
		if strings.Contains(logs, s) {
			t.Errorf("the logs hold %q:\n%s", s, logs)
		}
	}
}

// TestNewLeavesTokenStrength: how long or random a secret must be is the
// configuration's rule; New takes any secret that is not empty.
func TestNewLeavesTokenStrength(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.Tokens = []Token{{Name: "short", Secret: "abc", Role: RoleAdmin}} })
	b.want(b.do("GET", "/v1/queues", "abc", ""), 200)
}

// TestProducerRefusedOnAdminRoutes: a producer token gets 403 on every
// admin route of the table, naming its role, and changes nothing.
func TestProducerRefusedOnAdminRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.kill("q", "j1")
	before := b.snapshot()
	admin := 0
	for _, rt := range b.h.routes {
		if rt.role != RoleAdmin {
			continue
		}
		admin++
		path, body := routeRequest(rt)
		r := b.want(b.do(rt.method, path, producerSecret, body), 403)
		if e := r.apiErr(t); e.Code != wire.CodeForbidden || e.Field != "Authorization" || !strings.Contains(e.Message, "admin") {
			t.Errorf("%s %s: %+v", rt.method, rt.path, e)
		}
	}
	if admin < 8 {
		t.Errorf("only %d admin routes", admin)
	}
	if !maps.Equal(b.snapshot(), before) {
		t.Error("a refused request changed Redis")
	}
}

package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// loginRequest is a login form's request from addr.
func loginRequest(t *testing.T, addr string) *http.Request {
	t.Helper()
	r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/ui/login", nil)
	r.RemoteAddr = addr
	return r
}

// codeOf is the code of an *Error; "" for any other error.
func codeOf(err error) wire.Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestLogin(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		o.Tokens = append(o.Tokens, Token{Name: "limited", Secret: "limited-secret-0123456789", Role: RoleAdmin, Queues: []string{"b", "a"}})
	})
	p, err := b.h.Login(loginRequest(t, "192.0.2.1:1"), adminSecret)
	if err != nil || p.Name != "ops" || !p.Admin() || !p.Sees("any") {
		t.Fatalf("Login(admin) = %+v, %v", p, err)
	}
	p, err = b.h.Login(loginRequest(t, "192.0.2.1:1"), producerSecret)
	if err != nil || p.Name != "shop" || p.Admin() {
		t.Fatalf("Login(producer) = %+v, %v", p, err)
	}
	p, err = b.h.Login(loginRequest(t, "192.0.2.1:1"), "limited-secret-0123456789")
	if err != nil || !p.Sees("a") || p.Sees("c") {
		t.Fatalf("Login(limited) = %+v, %v", p, err)
	}
	for _, secret := range []string{"", "wrong-secret-0123456789"} {
		_, err := b.h.Login(loginRequest(t, "192.0.2.1:1"), secret)
		if codeOf(err) != wire.CodeUnauthorized {
			t.Errorf("Login(%q) = %v; want unauthorized", secret, err)
		}
	}
	if !strings.Contains(b.logs.String(), "api authentication failed") || !strings.Contains(b.logs.String(), "route=login") {
		t.Errorf("a failed login is not logged as a failed authentication:\n%s", b.logs)
	}
	if strings.Contains(b.logs.String(), "wrong-secret") {
		t.Errorf("the logs show a secret:\n%s", b.logs)
	}
}

// A failed login spends the address's failures, as a wrong bearer token
// does: once they are spent, Login refuses without checking the secret.
func TestLoginThrottled(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	b := setup(t, func(o *Options) {
		o.FailedAuthLimit = worker.RateLimit{N: 2, Per: time.Minute}
		o.Now = clock.Now
	})
	for range 2 {
		if _, err := b.h.Login(loginRequest(t, "192.0.2.7:1"), "wrong"); codeOf(err) != wire.CodeUnauthorized {
			t.Fatalf("failure: %v", err)
		}
	}
	_, err := b.h.Login(loginRequest(t, "192.0.2.7:1"), adminSecret)
	if codeOf(err) != wire.CodeRateLimited {
		t.Fatalf("Login after the failures = %v; want rate_limited", err)
	}
	if _, err := b.h.Login(loginRequest(t, "192.0.2.8:1"), adminSecret); err != nil {
		t.Fatalf("another address: %v", err)
	}
	clock.advance(time.Minute)
	if _, err := b.h.Login(loginRequest(t, "192.0.2.7:1"), adminSecret); err != nil {
		t.Fatalf("Login once the bucket refilled: %v", err)
	}
}

// TestEmptyLoginSpendsNothing: a login form sent empty presents no
// credential, as a request without an Authorization header does not: it
// is refused, but any number of them leave the address free to log in.
func TestEmptyLoginSpendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		o.FailedAuthLimit = worker.RateLimit{N: 2, Per: time.Minute}
		o.Now = newFakeClock().Now
	})
	for range 10 {
		if _, err := b.h.Login(loginRequest(t, "192.0.2.9:1"), ""); codeOf(err) != wire.CodeUnauthorized {
			t.Fatalf("empty login: %v; want unauthorized", err)
		}
	}
	if _, err := b.h.Login(loginRequest(t, "192.0.2.9:1"), adminSecret); err != nil {
		t.Fatalf("Login after empty forms: %v", err)
	}
}

func TestLookupAndSign(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p, _ := b.h.Login(loginRequest(t, "192.0.2.1:1"), adminSecret)
	q, ok := b.h.Lookup("ops")
	if !ok || q.Name != "ops" || !bytes.Equal(p.Sign([]byte("m")), q.Sign([]byte("m"))) {
		t.Fatalf("Lookup(ops) = %+v, %v; want the principal Login returned, with the same key", q, ok)
	}
	if _, ok := b.h.Lookup("nobody"); ok {
		t.Error("Lookup(nobody) found a principal")
	}
	if _, ok := b.h.Lookup(Anonymous); ok {
		t.Error("an API with tokens has an anonymous principal")
	}
	shop, _ := b.h.Lookup("shop")
	if bytes.Equal(shop.Sign([]byte("m")), p.Sign([]byte("m"))) {
		t.Error("two tokens sign alike")
	}
	// Another handler with the same tokens (another daemon) signs alike:
	// sessions survive a load balancer's choice of process.
	other := setup(t)
	o, _ := other.h.Lookup("ops")
	if !bytes.Equal(o.Sign([]byte("m")), p.Sign([]byte("m"))) {
		t.Error("two handlers with the same token sign differently")
	}
	// The same name with another secret signs differently: a session ends
	// when its token changes.
	changed := setup(t, func(o *Options) { o.Tokens[1].Secret = "another-admin-secret-0123456789" })
	c, _ := changed.h.Lookup("ops")
	if bytes.Equal(c.Sign([]byte("m")), p.Sign([]byte("m"))) {
		t.Error("a changed token signs as before")
	}
}

func TestOpenPrincipal(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.Tokens, o.InsecureNoAuth = nil, true })
	if !b.h.Open() {
		t.Fatal("Open() = false with InsecureNoAuth")
	}
	p, err := b.h.Login(loginRequest(t, "192.0.2.1:1"), "")
	q, ok := b.h.Lookup(Anonymous)
	if err != nil || !ok || p.Name != Anonymous || !p.Admin() || !bytes.Equal(p.Sign(nil), q.Sign(nil)) {
		t.Fatalf("open API: Login = %+v, %v; Lookup = %+v, %v", p, err, q, ok)
	}
	other := setup(t, func(o *Options) { o.Tokens, o.InsecureNoAuth = nil, true })
	o, _ := other.h.Lookup(Anonymous)
	if bytes.Equal(o.Sign(nil), p.Sign(nil)) {
		t.Error("two open handlers share a key")
	}
	if setup(t).h.Open() {
		t.Error("Open() = true with tokens")
	}
}

// ServeAs serves a request as the principal's token would be: roles,
// queue limits and replies are the API's.
func TestServeAs(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		o.Tokens = append(o.Tokens, Token{Name: "only-a", Secret: "only-a-secret-0123456789", Role: RoleAdmin, Queues: []string{"a"}})
	})
	serve := func(name, method, path, body string) *httptest.ResponseRecorder {
		p, ok := b.h.Lookup(name)
		if !ok {
			t.Fatalf("no principal %q", name)
		}
		r := httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+adminSecret) // ignored
		w := httptest.NewRecorder()
		b.h.ServeAs(w, r, p)
		return w
	}
	if w := serve("shop", "POST", "/v1/queues/a/jobs", `{"id": "j1"}`); w.Code != 201 {
		t.Fatalf("producer enqueue: %d %s", w.Code, w.Body)
	}
	w := serve("shop", "POST", "/v1/queues/a/pause", "")
	if w.Code != 403 || !strings.Contains(w.Body.String(), `token \"shop\" has the producer role`) {
		t.Errorf("producer pause: %d %s; want the API's 403", w.Code, w.Body)
	}
	if w := serve("only-a", "POST", "/v1/queues/b/pause", ""); w.Code != 403 {
		t.Errorf("pause of a queue outside the token's: %d %s", w.Code, w.Body)
	}
	if w := serve("ops", "POST", "/v1/queues/a/pause", ""); w.Code != 200 {
		t.Errorf("admin pause: %d %s", w.Code, w.Body)
	}
	st, err := b.client.Stats(t.Context(), "a")
	if err != nil || !st.Paused {
		t.Errorf("Stats(a) = %+v, %v; want paused", st, err)
	}
	// A request from outside cannot pass for a principal: the header is
	// what counts there.
	if r := b.do("POST", "/v1/queues/a/resume", "", ""); r.status != 401 {
		t.Errorf("a request without a token: %d", r.status)
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	open := setup(t, func(o *Options) { o.Tokens, o.InsecureNoAuth = nil, true })
	r := httptest.NewRequestWithContext(t.Context(), "GET", "http://evil.example/ui/", nil)
	if err := open.h.Guard(r); err == nil || !strings.Contains(err.Error(), "DNS rebinding") {
		t.Errorf("Guard(foreign Host) = %v; want a refusal", err)
	}
	r = httptest.NewRequestWithContext(t.Context(), "GET", "http://127.0.0.1:9750/ui/", nil)
	if err := open.h.Guard(r); err != nil {
		t.Errorf("Guard(127.0.0.1) = %v", err)
	}
	r = httptest.NewRequestWithContext(t.Context(), "POST", "http://127.0.0.1:9750/ui/login", nil)
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	if err := setup(t).h.Guard(r); err == nil {
		t.Error("Guard let a cross-site POST through")
	}
}

// TestPermitIsTheAPIsRule: Permit answers, for every route and token, what
// a request of that token on that route gets from the API: the web UI
// asks it before each page, so both surfaces apply one rule.
func TestPermitIsTheAPIsRule(t *testing.T) {
	t.Parallel()
	const limitedSecret = "limited-secret-0123456789"
	b := setup(t, func(o *Options) {
		o.Tokens = append(o.Tokens, Token{Name: "billing", Secret: limitedSecret, Role: RoleAdmin, Queues: []string{"billing"}})
	})
	secrets := map[string]string{"shop": producerSecret, "ops": adminSecret, "billing": limitedSecret}
	for name, secret := range secrets {
		p, ok := b.h.Lookup(name)
		if !ok {
			t.Fatalf("no token %s", name)
		}
		for _, rt := range b.h.routes {
			for _, queue := range []string{"q", "billing"} {
				path := strings.NewReplacer("{queue}", queue, "{id}", "x").Replace(rt.path)
				if path == rt.path {
					queue = "" // a route without a queue
				}
				got := b.do(rt.method, path, secret, "")
				err := b.h.Permit(p, rt.method+" "+rt.path, queue)
				if refused := got.status == http.StatusForbidden; refused != (err != nil) {
					t.Errorf("%s %s with %s: the API answered %d, Permit %v", rt.method, path, name, got.status, err)
				}
				if err != nil && got.apiErr(t).Message != err.Error() {
					t.Errorf("%s %s with %s: the API says %q, Permit %q", rt.method, path, name, got.apiErr(t).Message, err)
				}
			}
		}
	}
	p, _ := b.h.Lookup("ops")
	if err := b.h.Permit(p, "GET /v1/nope", ""); err == nil || codeOf(err) != "" {
		t.Errorf("Permit of a route the API lacks = %v; want a plain error", err)
	}
}

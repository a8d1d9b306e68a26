package api

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestFailedAuthLimit: an address that fails authentication N times is
// refused, right token or not, with 429 and Retry-After on a connection
// kept open, until a failure has refilled; failures are counted and logged
// with the address, throttled requests only counted.
func TestFailedAuthLimit(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	reg := prometheus.NewRegistry()
	b := setup(t, func(o *Options) {
		o.FailedAuthLimit = worker.RateLimit{N: 3, Per: 2 * time.Minute}
		o.Now = clock.Now
		o.Registerer = reg
	})
	const wrong = "wrong-secret-0123456789"
	local := netip.MustParseAddr("127.0.0.1")

	// A missing token (refused, counted, spending nothing), a wrong one
	// twice, and a wrong one on no route (the fallback authenticates too).
	b.want(b.do("GET", "/v1/queues/q/jobs/x", "", ""), 401)
	b.want(b.do("POST", "/v1/queues/q/jobs", wrong, `{}`), 401)
	b.want(b.do("GET", "/v1/queues/q/jobs/x", wrong, ""), 401)
	if throttled(b.h, local) {
		t.Fatal("throttled after 2 failures of 3")
	}
	b.want(b.do("GET", "/v1/nope", wrong, ""), 401)
	if !throttled(b.h, local) || !throttled(b.h, netip.MustParseAddr("::ffff:127.0.0.1")) {
		t.Fatal("not throttled after 3 failures")
	}
	if throttled(b.h, netip.MustParseAddr("127.0.0.2")) {
		t.Error("another address is throttled")
	}

	// Now even the right token is refused, unchecked, and nothing stored.
	before := b.snapshot()
	r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "1"}`), 429)
	if e := r.apiErr(t); e.Code != wire.CodeRateLimited || e.Message != "too many failed authentications from this address; retry in 40s" {
		t.Errorf("error %+v", e)
	}
	if ra := r.header.Get("Retry-After"); ra != "40" {
		t.Errorf("Retry-After %q, want 40 (a failure refills in 2m/3)", ra)
	}
	if r.closed {
		t.Error("a throttled request's connection was closed: the flood would open the next one at once")
	}
	if !maps.Equal(b.snapshot(), before) {
		t.Error("a throttled request changed Redis")
	}
	b.want(b.do("GET", "/v1/openapi.json", "", ""), 429)

	// Throttled requests are counted, not logged: a flood must not
	// flood the log.
	logs := b.logs.String()
	for range 20 {
		b.want(b.do("GET", "/v1/queues", wrong, ""), 429)
	}
	if b.logs.String() != logs {
		t.Errorf("throttled requests were logged:\n%s", strings.TrimPrefix(b.logs.String(), logs))
	}
	if got, want := authFailures(t, reg), map[string]float64{"missing": 1, "invalid": 3, "throttled": 22}; !maps.Equal(got, want) {
		t.Errorf("courier_api_auth_failures_total %v, want %v", got, want)
	}
	if strings.Contains(logs, "reason=missing") {
		t.Errorf("a request without a token was logged as a failed authentication:\n%s", logs)
	}
	for _, line := range []string{
		`level=INFO msg="api authentication failed" addr=127.0.0.1 reason=invalid method=GET route=/v1/queues/{queue}/jobs/{id}`,
		`level=INFO msg="api authentication failed" addr=127.0.0.1 reason=invalid method=POST route=/v1/queues/{queue}/jobs`,
		`level=INFO msg="api authentication failed" addr=127.0.0.1 reason=invalid method=GET route=""`,
		`level=WARN msg="api client throttled after repeated authentication failures" addr=127.0.0.1 retry_in=40s`,
	} {
		if strings.Count(logs, line) != 1 {
			t.Errorf("want one log line %s; logs:\n%s", line, logs)
		}
	}

	// A failure refills in 40s: then the right token passes, and the next
	// failure throttles the address again.
	clock.advance(40*time.Second - time.Millisecond)
	b.want(b.do("GET", "/v1/queues", adminSecret, ""), 429)
	clock.advance(time.Millisecond)
	if throttled(b.h, local) {
		t.Error("still throttled after the refill")
	}
	b.want(b.do("GET", "/v1/queues", adminSecret, ""), 200)
	b.want(b.do("GET", "/v1/queues", wrong, ""), 401)
	b.want(b.do("GET", "/v1/queues", adminSecret, ""), 429)
}

// TestFailedAuthPerAddress: each address has its own bucket, taken from
// the connection (never from X-Forwarded-For); an IPv6 client's /64 is
// one address; a client without an IP address (a Unix socket) is not
// limited. No Redis needed: a request that passes authentication gets 503
// from the handler's missing backend.
func TestFailedAuthPerAddress(t *testing.T) {
	t.Parallel()
	h := newBareHandler(t, func(o *Options) {
		o.FailedAuthLimit = worker.RateLimit{N: 2, Per: time.Minute}
		o.Now = newFakeClock().Now
	})
	const passed = http.StatusServiceUnavailable
	fail := func(remote string) {
		t.Helper()
		for range 2 {
			if code := serveFrom(t, h, remote, "wrong-secret-0123456789", nil); code != 401 {
				t.Fatalf("failure from %s: %d, want 401", remote, code)
			}
		}
	}
	fail("192.0.2.1:1000")
	fail("[2001:db8::1]:1000")
	tests := []struct {
		remote string
		header http.Header
		want   int
	}{
		{"192.0.2.1:2000", nil, 429},
		{"[::ffff:192.0.2.1]:2000", nil, 429},
		{"192.0.2.1:2000", http.Header{"X-Forwarded-For": {"192.0.2.9"}}, 429},
		{"192.0.2.2:1000", nil, passed},
		{"192.0.2.2:1000", http.Header{"X-Forwarded-For": {"192.0.2.1"}}, passed},
		{"[2001:db8::2]:1000", nil, 429},
		{"[2001:db8:0:1::1]:1000", nil, passed},
	}
	for _, tt := range tests {
		if code := serveFrom(t, h, tt.remote, adminSecret, tt.header); code != tt.want {
			t.Errorf("from %s %v: %d, want %d", tt.remote, tt.header, code, tt.want)
		}
	}
	if !throttled(h, netip.MustParseAddr("2001:db8::ffff")) || throttled(h, netip.MustParseAddr("2001:db8:0:1::")) {
		t.Error("throttling does not go by the /64 of an IPv6 address")
	}
	for range 10 {
		if code := serveFrom(t, h, "@", "wrong-secret-0123456789", nil); code != 401 {
			t.Fatalf("a Unix socket client got %d, want 401", code)
		}
	}
}

// TestMissingTokenSpendsNothing: requests without an Authorization
// header, such as a web page's <img> tags pointing at the API make a
// browser send, are refused with 401 and counted, but spend none of the
// address's failures and are not logged: fifteen of them leave the
// address free to use the API, and a wrong token still spends one.
func TestMissingTokenSpendsNothing(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	logs := &strings.Builder{}
	h := newBareHandler(t, func(o *Options) {
		o.FailedAuthLimit = worker.RateLimit{N: 3, Per: time.Minute}
		o.Now = newFakeClock().Now
		o.Registerer = reg
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	for i := range 15 {
		if code := serveFrom(t, h, "192.0.2.1:1000", "", nil); code != 401 {
			t.Fatalf("request %d without a token: %d, want 401", i, code)
		}
	}
	if throttled(h, netip.MustParseAddr("192.0.2.1")) {
		t.Fatal("fifteen requests without a token throttled the address")
	}
	if logs.Len() > 0 {
		t.Errorf("requests without a token were logged:\n%s", logs)
	}
	if code := serveFrom(t, h, "192.0.2.1:1000", adminSecret, nil); code == 429 || code == 401 {
		t.Fatalf("the right token after requests without one: %d", code)
	}
	if got := authFailures(t, reg)["missing"]; got != 15 {
		t.Errorf("missing %v, want 15", got)
	}
	for range 3 {
		serveFrom(t, h, "192.0.2.1:1000", "wrong-secret-0123456789", nil)
	}
	if !throttled(h, netip.MustParseAddr("192.0.2.1")) {
		t.Error("three wrong tokens did not throttle the address")
	}
}

// TestFailedAuthNoLimit: the zero FailedAuthLimit throttles no one.
func TestFailedAuthNoLimit(t *testing.T) {
	t.Parallel()
	h := newBareHandler(t)
	for range 100 {
		if code := serveFrom(t, h, "192.0.2.1:1000", "wrong-secret-0123456789", nil); code != 401 {
			t.Fatalf("%d, want 401", code)
		}
	}
	if throttled(h, netip.MustParseAddr("192.0.2.1")) {
		t.Error("throttled without a limit")
	}
}

// TestFailedAuthTableBounded: a flood of failures from more addresses than
// the table holds leaves it at its cap, throttling the latest addresses.
func TestFailedAuthTableBounded(t *testing.T) {
	t.Parallel()
	h := newBareHandler(t, func(o *Options) {
		o.FailedAuthLimit = worker.RateLimit{N: 1, Per: time.Hour}
		o.Now = newFakeClock().Now
	})
	const n = maxKeys + maxKeys/5
	nth := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	for i := range n {
		addr := nth(i)
		if code := serveFrom(t, h, netip.AddrPortFrom(addr, 1000).String(), "wrong-secret-0123456789", nil); code != 401 {
			t.Fatalf("address %d: %d, want 401", i, code)
		}
	}
	if size := h.failures.size(); size != maxKeys {
		t.Errorf("%d addresses kept, want the cap %d", size, maxKeys)
	}
	if !throttled(h, nth(n-1)) || throttled(h, nth(0)) {
		t.Error("the cap did not forget the address that failed longest ago, keeping the latest")
	}
}

// TestAuthFailureMetricsShared: two handlers on one registry share the
// counter, whose series exist before the first failure.
func TestAuthFailureMetricsShared(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h1 := newBareHandler(t, func(o *Options) { o.Registerer = reg })
	h2 := newBareHandler(t, func(o *Options) { o.Registerer = reg })
	if got, want := authFailures(t, reg), map[string]float64{"missing": 0, "invalid": 0, "throttled": 0}; !maps.Equal(got, want) {
		t.Errorf("before any failure: %v, want %v", got, want)
	}
	serveFrom(t, h1, "192.0.2.1:1", "", nil)
	serveFrom(t, h2, "192.0.2.1:1", "", nil)
	if got := authFailures(t, reg)["missing"]; got != 2 {
		t.Errorf("missing %v, want 2", got)
	}
}

// newBareHandler returns a handler with an admin token and no backend.
func newBareHandler(t *testing.T, mutate ...func(*Options)) *Handler {
	t.Helper()
	opts := Options{
		Backend: func() admin.Operator { return nil },
		Tokens:  []Token{{Name: "ops", Secret: adminSecret, Role: RoleAdmin}},
	}
	for _, m := range mutate {
		m(&opts)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.hold = 0 // the tests' clocks are fake; TestThrottledHeld holds
	return h
}

// throttled reports whether h refuses addr unchecked at the moment.
func throttled(h *Handler, addr netip.Addr) bool {
	return h.failures != nil && h.failures.wait(clientKey(addr), h.now()) > 0
}

// serveFrom serves GET /v1/queues from the client address remote with
// secret ("" for none) and header, and returns the status.
func serveFrom(t *testing.T, h http.Handler, remote, secret string, header http.Header) int {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/v1/queues", nil)
	req.RemoteAddr = remote
	for k, vs := range header {
		req.Header[k] = vs
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// authFailures returns courier_api_auth_failures_total by reason.
func authFailures(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "courier_api_auth_failures_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "reason" {
				t.Fatalf("labels %v, want reason only", m.GetLabel())
			}
			out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if len(out) == 0 {
		t.Fatal("no courier_api_auth_failures_total in the registry")
	}
	return out
}

// TestThrottledHeld: a throttled request waits for its refusal, a second
// or until the address may try again if that is sooner, so that a flood's
// connections carry a request a second each; a client that leaves ends the
// wait; past maxHeld held at once, the refusal comes at once.
func TestThrottledHeld(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	h := newBareHandler(t, func(o *Options) {
		o.FailedAuthLimit = worker.RateLimit{N: 1, Per: time.Hour}
		o.Now = clock.Now
	})
	h.hold = 50 * time.Millisecond
	if code := serveFrom(t, h, "192.0.2.1:1000", "wrong-secret-0123456789", nil); code != 401 {
		t.Fatalf("first failure: %d, want 401", code)
	}
	start := time.Now()
	if code := serveFrom(t, h, "192.0.2.1:1000", adminSecret, nil); code != 429 {
		t.Fatalf("throttled: %d, want 429", code)
	}
	if held := time.Since(start); held < h.hold {
		t.Errorf("the refusal came after %s, want it held %s", held, h.hold)
	}

	// Sooner when the address may try again sooner: 1ms before a refill.
	clock.advance(time.Hour - time.Millisecond)
	start = time.Now()
	if code := serveFrom(t, h, "192.0.2.1:1000", adminSecret, nil); code != 429 {
		t.Fatalf("throttled: %d, want 429", code)
	}
	if held := time.Since(start); held >= h.hold {
		t.Errorf("held %s, want about 1ms (the refill is 1ms away)", held)
	}

	// A client that leaves ends the wait.
	h.hold = time.Hour
	clock.advance(-time.Hour + time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/queues", nil)
	req.RemoteAddr = "192.0.2.1:1000"
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a throttled request whose client left is still held")
	}

	// With maxHeld requests held already, the next is refused at once.
	h.held.Store(maxHeld)
	refused := make(chan int, 1)
	go func() { refused <- serveFrom(t, h, "192.0.2.1:1000", adminSecret, nil) }()
	select {
	case code := <-refused:
		if code != 429 {
			t.Errorf("throttled past maxHeld: %d, want 429", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a throttled request past maxHeld was held")
	}
	if n := h.held.Load(); n != maxHeld {
		t.Errorf("%d requests counted as held, want %d", n, maxHeld)
	}
}

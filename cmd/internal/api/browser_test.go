package api

import (
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// TestCrossOriginRefused: without authentication, a browser's
// state-changing request from another site (a text/plain POST needs no
// CORS preflight) is refused and changes nothing; same-origin requests and
// those of clients that are not browsers go through.
func TestCrossOriginRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) { o.Tokens, o.InsecureNoAuth = nil, true })
	b.kill("q", "d")
	post := func(path, body string, header http.Header) reply {
		t.Helper()
		req := b.request("POST", path, "", body)
		req.Header.Set("Content-Type", "text/plain")
		maps.Copy(req.Header, header)
		return b.send(req)
	}
	before := b.snapshot()
	for name, header := range map[string]http.Header{
		"Sec-Fetch-Site cross-site": {"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}},
		"Sec-Fetch-Site same-site":  {"Sec-Fetch-Site": {"same-site"}},
		"foreign Origin only":       {"Origin": {"https://evil.example"}},
	} {
		for _, path := range []string{"/v1/queues/q/jobs", "/v1/queues/q/dead/requeue", "/v1/queues/q/dead/purge"} {
			r := b.want(post(path, `{"id": "csrf"}`, header), http.StatusForbidden)
			if e := r.apiErr(t); e.Code != wire.CodeForbidden || !strings.Contains(e.Message, "cross-origin request refused") {
				t.Errorf("%s, POST %s: %+v", name, path, e)
			}
		}
	}
	if !maps.Equal(b.snapshot(), before) {
		t.Error("a cross-origin request changed Redis")
	}

	b.want(post("/v1/queues/q/jobs", `{"id": "no-headers"}`, nil), http.StatusCreated)
	b.want(post("/v1/queues/q/jobs", `{"id": "same-origin"}`, http.Header{"Sec-Fetch-Site": {"same-origin"}}), http.StatusCreated)
	b.want(post("/v1/queues/q/jobs", `{"id": "typed"}`, http.Header{"Sec-Fetch-Site": {"none"}}), http.StatusCreated)
	b.want(post("/v1/queues/q/jobs", `{"id": "own-origin"}`, http.Header{"Origin": {b.srv.URL}}), http.StatusCreated)
	b.want(post("/v1/queues/q/dead/requeue", "", http.Header{"Sec-Fetch-Site": {"same-origin"}}), http.StatusOK)
	// Reading is safe from any origin; DNS rebinding is TestForeignHost's.
	req := b.request("GET", "/v1/queues/q/jobs/d", "", "")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	b.want(b.send(req), http.StatusOK)
}

// TestForeignHost: without authentication, a request addressed to a name
// that could be rebound to this machine is refused, GETs included; IP
// literals, localhost, its subdomains and AllowedHosts are served. With
// tokens, any Host is.
func TestForeignHost(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		o.Tokens, o.InsecureNoAuth = nil, true
		o.AllowedHosts = []string{"Courier.Internal", "jobs.example.com."}
	})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "secret-job", Payload: []byte(`"private"`)})
	get := func(host, path string) reply {
		t.Helper()
		req := b.request("GET", path, "", "")
		req.Host = host
		return b.send(req)
	}
	for _, host := range []string{"evil.example", "evil.example:9750", "localhost.evil.example", "x.courier.internal", "courier.internal.evil"} {
		for _, path := range []string{"/v1/queues/q/jobs/secret-job", "/v1/queues", "/v1/openapi.json", "/v1/nope"} {
			r := b.want(get(host, path), http.StatusForbidden)
			e := r.apiErr(t)
			if e.Code != wire.CodeForbidden || e.Field != "Host" || !strings.Contains(e.Message, `Host "`+host+`" is not served`) ||
				!strings.Contains(e.Message, "allowed hosts") {
				t.Errorf("Host %s, GET %s: %+v", host, path, e)
			}
			if strings.Contains(string(r.body), "private") {
				t.Errorf("Host %s, GET %s: the payload leaked", host, path)
			}
		}
	}
	for _, host := range []string{
		"127.0.0.1", "127.0.0.1:9750", "10.1.2.3:80", "[::1]:9750", "[::1]", "[fe80::1%25eth0]:1",
		"localhost", "LOCALHOST:9750", "api.localhost:9750", "localhost.",
		"courier.internal", "courier.internal:9750", "COURIER.internal.", "jobs.example.com",
	} {
		b.want(get(host, "/v1/queues/q/jobs/secret-job"), http.StatusOK)
	}
	req := b.request("POST", "/v1/queues/q/jobs", "", `{}`)
	req.Host = "evil.example"
	b.want(b.send(req), http.StatusForbidden)

	// With tokens, a rebound page has no token to send: names are served.
	tb := setup(t)
	req = tb.request("GET", "/v1/queues", adminSecret, "")
	req.Host = "courier.example.com"
	tb.want(tb.send(req), http.StatusOK)
}

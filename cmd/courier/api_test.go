package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// The tests in this file cover the HTTP API as courier serves it (run and
// dev) and the client commands' --api mode.

const (
	testAdminToken    = "test-admin-token-0123456789"
	testProducerToken = "test-producer-token-0123456789"
)

// apiServer serves the API on the bundle's prefix, in-process, with an
// admin token.
func (b *cliBundle) apiServer(t *testing.T) string {
	t.Helper()
	h, err := api.New(api.Options{
		Backend: func() admin.Operator { return b.client },
		Tokens:  []api.Token{{Name: "ops", Secret: testAdminToken, Role: api.RoleAdmin}},
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// relativeRE matches inspect's "(in 59m59.9s)" / "(1.2s ago)", which moves
// between two runs.
var relativeRE = regexp.MustCompile(`\((in [^)]*|[^)]* ago)\)`)

// TestCLIThroughAPI: enqueue, inspect and dead print the same through the
// API (--api URL --token T) as directly on Redis, and fail alike.
func TestCLIThroughAPI(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	direct := func(stdin, cmd string, flags ...string) (int, string, string) {
		t.Helper()
		return b.run(t, stdin, cmd, flags...)
	}
	viaAPI := func(stdin, cmd string, flags ...string) (int, string, string) {
		t.Helper()
		args := append(strings.Fields(cmd), "--api", url, "--token", testAdminToken)
		return runCLIStdin(t, t.Context(), stdin, append(args, flags...)...)
	}
	same := func(what string, stdin, cmd string, flags ...string) (string, string) {
		t.Helper()
		c1, out1, err1 := direct(stdin, cmd, flags...)
		c2, out2, err2 := viaAPI(stdin, cmd, flags...)
		out1, out2 = relativeRE.ReplaceAllString(out1, "(…)"), relativeRE.ReplaceAllString(out2, "(…)")
		if c1 != c2 || out1 != out2 || err1 != err2 {
			t.Errorf("%s: directly exit %d\n%s%s\nthrough the API exit %d\n%s%s", what, c1, out1, err1, c2, out2, err2)
		}
		return out2, err2
	}

	// enqueue through the API; the job is stored as the direct mode
	// would store it, byte for byte.
	payloads := map[string]string{"json": `{"to":"ada@example.com","n":[1,2]}`, "text": "hello\n", "binary": "\x00\xff", "pretty": "{ \"a\": 1 }"}
	for name, p := range payloads {
		code, out, errOut := viaAPI(p, "enqueue", "--queue", "q", "--id", name, "--delay", "1h", "--max-attempts", "3", "--timeout", "1m")
		if code != 0 || strings.TrimSpace(out) != name {
			t.Fatalf("enqueue %s: exit %d, %q %s", name, code, out, errOut)
		}
		if j := b.get(t, "q", name); string(j.Payload) != p || j.MaxAttempts != 3 || j.Timeout != time.Minute || j.State != worker.StateScheduled {
			t.Errorf("%s: stored %+v (payload %q)", name, j, j.Payload)
		}
	}
	code, out, _ := viaAPI("", "enqueue", "--queue", "q", "--payload", "generated id")
	if code != 0 || b.get(t, "q", strings.TrimSpace(out)) == nil {
		t.Errorf("enqueue with a generated id: exit %d, %q", code, out)
	}
	// The same refusals.
	same("existing id", "", "enqueue", "--queue", "q", "--id", "json", "--payload", "x")
	same("bad queue name", "", "enqueue", "--queue", "a{b}", "--payload", "x")
	same("bad id", "", "enqueue", "--queue", "q", "--id", "a b", "--payload", "x")
	same("run-at beyond the horizon", "", "enqueue", "--queue", "q", "--at", "2999-01-01T00:00:00Z", "--payload", "x")

	// Priorities and unique keys: stored alike, refused alike.
	code, out, errOut := viaAPI("", "enqueue", "--queue", "q", "--id", "unique", "--priority", "high", "--unique-key", "order:42",
		"--unique-for", "2h", "--unique-after-finish", "--payload", "x")
	if code != 0 || strings.TrimSpace(out) != "unique" {
		t.Fatalf("enqueue with a unique key: exit %d, %q %s", code, out, errOut)
	}
	if j := b.get(t, "q", "unique"); j.Priority != worker.PriorityHigh || j.UniqueKey != "order:42" || j.UniqueFor != 2*time.Hour || !j.UniqueAfterFinish {
		t.Errorf("stored %+v", j)
	}
	_, errOut = same("held unique key", "", "enqueue", "--queue", "q", "--unique-key", "order:42", "--payload", "x")
	if !strings.Contains(errOut, `is held by job "unique"`) {
		t.Errorf("held unique key: stderr %q does not name the holder", errOut)
	}
	same("held unique key, with an id", "", "enqueue", "--queue", "q", "--id", "other", "--unique-key", "order:42", "--payload", "x")
	same("the holder enqueued again", "", "enqueue", "--queue", "q", "--id", "unique", "--unique-key", "order:42", "--payload", "x")
	same("bad unique key", "", "enqueue", "--queue", "q", "--unique-key", "a b", "--payload", "x")
	same("unique window over a year", "", "enqueue", "--queue", "q", "--unique-key", "k", "--unique-for", "9000h", "--payload", "x")
	same("bad priority", "", "enqueue", "--queue", "q", "--priority", "urgent", "--payload", "x")

	// inspect, every way.
	b.killJobs(t, "d", "d1", "d2", "d3")
	same("inspect", "", "inspect")
	same("inspect --json", "", "inspect", "--json")
	same("inspect a queue", "", "inspect", "--queue", "q")
	for name := range payloads {
		same("inspect a job: "+name, "", "inspect", "--queue", "q", "--job", name)
		same("inspect a job as JSON: "+name, "", "inspect", "--queue", "q", "--job", name, "--json")
	}
	same("inspect a job with a unique key", "", "inspect", "--queue", "q", "--job", "unique")
	same("inspect a job with a unique key as JSON", "", "inspect", "--queue", "q", "--job", "unique", "--json")
	same("inspect a dead job", "", "inspect", "--queue", "d", "--job", "d1", "--json")
	same("inspect a missing job", "", "inspect", "--queue", "q", "--job", "nope")

	// dead, every way.
	same("dead list", "", "dead list", "--queue", "d")
	same("dead list --json", "", "dead list", "--queue", "d", "--json")
	out, _ = same("dead list, a page", "", "dead list", "--queue", "d", "--limit", "2")
	_, next := deadTable(t, out)
	same("dead list, the next page", "", "dead list", "--queue", "d", "--limit", "2", "--cursor", next)
	same("dead list, a bad cursor", "", "dead list", "--queue", "d", "--cursor", "nonsense!")
	same("dead list by error text", "", "dead list", "--queue", "d", "--error", "BOOM D2", "--json")
	same("jobs list, scheduled", "", "jobs list", "--queue", "q", "--state", "scheduled", "--json")
	same("jobs list, a page of ready", "", "jobs list", "--queue", "q", "--state", "ready", "--limit", "1")
	same("jobs list, a filter on ready", "", "jobs list", "--queue", "q", "--state", "ready", "--error", "x")
	same("dry run of a purge by filter", "", "dead purge", "--queue", "d", "--error", "boom", "--dry-run", "--json")
	same("queue forget of a queue in use", "", "queue forget", "--queue", "d")
	same("requeue a job that is not dead", "", "dead requeue", "--queue", "d", "--job", "nope")
	same("purge a job that is not dead", "", "dead purge", "--queue", "q", "--job", "json")
	if code, out, errOut := viaAPI("", "dead requeue", "--queue", "d", "--job", "d1"); code != 0 || out != "requeued 1 dead job(s) of queue d\n" {
		t.Errorf("requeue: exit %d %q %s", code, out, errOut)
	}
	if code, out, errOut := viaAPI("", "dead purge", "--queue", "d", "--job", "d2"); code != 0 || out != "purged 1 dead job(s) of queue d\n" {
		t.Errorf("purge: exit %d %q %s", code, out, errOut)
	}
	b.killJobs(t, "f", "f1", "f2", "f3")
	if code, out, errOut := viaAPI("", "dead requeue", "--queue", "f", "--all"); code != 0 || out != "requeued 3 dead job(s) of queue f\n" {
		t.Errorf("requeue all: exit %d %q %s", code, out, errOut)
	}
	b.killJobs(t, "e", "e1", "e2")
	if code, out, errOut := viaAPI("", "dead purge", "--queue", "e", "--all", "--yes"); code != 0 || out != "purged 2 dead job(s) of queue e\n" {
		t.Errorf("purge all: exit %d %q %s", code, out, errOut)
	}
	if s := b.stats(t, "e"); s.Dead != 0 {
		t.Errorf("queue e after purge --all: %+v", s)
	}
}

// TestCLIThroughAPIRefuses: a wrong token, an unreachable API and mixed
// flags fail cleanly.
func TestCLIThroughAPIRefuses(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	tests := []struct {
		name  string
		args  []string
		code  int
		inErr string
	}{
		{"wrong token", []string{"inspect", "--api", url, "--token", "wrong-token-0123456789"}, 1, "invalid token (unauthorized)"},
		{"no token", []string{"inspect", "--api", url}, 1, "missing token"},
		{"unreachable", []string{"inspect", "--api", "http://127.0.0.1:1", "--token", "x"}, exitUnavailable, "courier API"},
		{"bad URL", []string{"dead list", "--queue", "q", "--api", "127.0.0.1:9750"}, exitUsage, "want http(s)://host:port"},
		{"--api and --redis", []string{"inspect", "--api", url, "--redis", b.addr}, 2, "give --api or --redis, not both"},
		{"--api and --config", []string{"enqueue", "--queue", "q", "--payload", "x", "--api", url, "--config", "x.yaml"}, 2, "give --api or --config, not both"},
		{"--token without --api", []string{"inspect", "--redis", b.addr, "--token", "x"}, 2, "--token needs --api"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append(strings.Fields(tt.args[0]), tt.args[1:]...)
			code, out, errOut := runCLI(t, t.Context(), args...)
			if code != tt.code || out != "" || !strings.Contains(errOut, tt.inErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, out, errOut, tt.code, tt.inErr)
			}
			if strings.Contains(errOut, "wrong-token") {
				t.Errorf("the token was printed: %s", errOut)
			}
		})
	}
}

// TestCLIAPIEnvironment: COURIER_API and COURIER_TOKEN stand for the
// flags.
func TestCLIAPIEnvironment(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs processes")
	}
	b := setupCLI(t)
	url := b.apiServer(t)
	env := []string{"COURIER_API=" + url, "COURIER_TOKEN=" + testAdminToken}
	code, out, errOut := courierEnv(t, env, nil, "enqueue", "--queue", "q", "--id", "from-env", "--payload", "x")
	if code != 0 || out != "from-env\n" {
		t.Fatalf("enqueue: exit %d %q %s", code, out, errOut)
	}
	code, out, errOut = courierEnv(t, env, nil, "inspect", "--queue", "q", "--job", "from-env", "--json")
	if code != 0 || payloadOf(t, decodeJSON[wire.Job](t, out)) != "x" {
		t.Errorf("inspect: exit %d %q %s", code, out, errOut)
	}
}

var adminAddrRE = regexp.MustCompile(`"admin API listening" addr=(127\.0\.0\.1:\d+)`)

// apiRequest sends a request to a running courier and returns the status
// and body.
func apiRequest(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

func apiConfig(addr, prefix, admin string) string {
	return fmt.Sprintf(`
redis: {addr: [%q], prefix: %s}
http: {addr: 127.0.0.1:0}
queues:
  q: {handler: log, concurrency: 3, rate_limit: 50 per 1s}
admin:
%s`, addr, prefix, admin)
}

// TestRunServesAPI: courier run serves the API next to /metrics; a service
// in any language enqueues, inspects, cancels and requeues over plain
// HTTP, and the tokens never reach the log.
func TestRunServesAPI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	cfg := writeConfig(t, apiConfig(addr, prefix, fmt.Sprintf(`
  tokens:
    - {name: shop, token: %s, role: producer}
    - {name: ops, token: %s, role: admin}
`, testProducerToken, testAdminToken)))
	daemon := startCourier(t, nil, "run", "--config", cfg, "--log-level", "debug")
	base := "http://" + daemon.waitOutput(httpAddrRE, 20*time.Second)
	daemon.waitOutput(regexp.MustCompile(`msg="worker pool started"`), 20*time.Second)

	code, body := apiRequest(t, "POST", base+"/v1/queues/q/jobs", testProducerToken, `{"id": "now", "payload": {"hello": "api"}}`)
	if code != 201 {
		t.Fatalf("enqueue: %d %s", code, body)
	}
	daemon.waitOutput(regexp.MustCompile(`msg=job queue=q id=now attempt=1 payload="\{\\"hello\\":\\"api\\"\}"`), 10*time.Second)
	// The handler has run; its ack is written in the next batch: the id is
	// free once the job is gone.
	if err := (testkit.Poll{Every: httpPollEvery}).Until(t, 10*time.Second, func() bool {
		code, _ := apiRequest(t, "GET", base+"/v1/queues/q/jobs/now", testProducerToken, "")
		return code == 404
	}); err != nil {
		t.Fatalf("job now was not acked: %v", err)
	}

	code, body = apiRequest(t, "POST", base+"/v1/queues/q/jobs/batch", testProducerToken, `{"jobs": [{"id": "later", "delay": "1h"}, {"id": "now"}]}`)
	if code != 200 || !strings.Contains(body, `"created":2`) {
		t.Errorf("batch: %d %s", code, body)
	}
	// The API's enqueues count in the daemon's metrics.
	if _, metrics := apiRequest(t, "GET", base+"/metrics", "", ""); !strings.Contains(metrics, `courier_jobs_enqueued_total{queue="q"} 3`) {
		t.Errorf("courier_jobs_enqueued_total does not count the 3 jobs enqueued through the API:\n%s", grepLines(metrics, "courier_jobs_enqueued_total"))
	}
	code, body = apiRequest(t, "GET", base+"/v1/queues/q/jobs/later", testProducerToken, "")
	if code != 200 || !strings.Contains(body, `"state":"scheduled"`) {
		t.Errorf("get: %d %s", code, body)
	}
	if code, body = apiRequest(t, "DELETE", base+"/v1/queues/q/jobs/later", testProducerToken, ""); code != 204 {
		t.Errorf("cancel by the producer: %d %s", code, body)
	}
	if code, body = apiRequest(t, "DELETE", base+"/v1/queues/q/jobs/later", testAdminToken, ""); code != 204 {
		t.Errorf("cancel again: %d %s; want 204, the job is cancelled already", code, body)
	}
	if code, body = apiRequest(t, "GET", base+"/v1/queues/q/jobs/later", testProducerToken, ""); code != 200 || !strings.Contains(body, `"state":"cancelled"`) {
		t.Errorf("get of the cancelled job: %d %s", code, body)
	}
	// The queue with its fleet: this process leads, with its concurrency
	// and rate limit.
	var q struct {
		Leader      *string `json:"leader"`
		Concurrency int     `json:"concurrency"`
		RateLimit   *string `json:"rate_limit"`
		Workers     []struct{ ID string }
	}
	_ = testkit.Poll{Every: httpPollEvery}.Until(t, 20*time.Second, func() bool {
		code, body = apiRequest(t, "GET", base+"/v1/queues/q", testAdminToken, "")
		if err := json.Unmarshal([]byte(body), &q); code != 200 || err != nil {
			t.Fatalf("queue: %d %s", code, body)
		}
		return q.Leader != nil
	}) // a queue still without a leader fails below
	if q.Leader == nil || q.Concurrency != 3 || q.RateLimit == nil || *q.RateLimit != "50 per 1s" || len(q.Workers) != 1 || q.Workers[0].ID != *q.Leader {
		t.Errorf("queue: %s", body)
	}
	// The CLI goes through the same API.
	code, out, errOut := courierEnv(t, []string{"COURIER_TOKEN=" + testAdminToken}, nil, "inspect", "--api", base, "--queue", "q")
	if code != 0 || !strings.Contains(out, "QUEUE") {
		t.Errorf("inspect --api: exit %d %q %s", code, out, errOut)
	}

	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}
	logs := daemon.stderr.String()
	if !strings.Contains(logs, `msg="api request"`) || !strings.Contains(logs, "token=shop") {
		t.Errorf("no request log lines with the token's name:\n%s", logs)
	}
	for _, secret := range []string{testAdminToken, testProducerToken} {
		if strings.Contains(logs, secret) || strings.Contains(daemon.stdout.String(), secret) {
			t.Errorf("a token is in the output:\n%s", logs)
		}
	}
}

// TestRunAdminAddr: with admin.addr the API has a listener of its own, and
// the main listener does not serve it.
func TestRunAdminAddr(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	cfg := writeConfig(t, apiConfig(addr, prefix, fmt.Sprintf(`
  addr: 127.0.0.1:0
  read_timeout: 5s
  tokens: [{name: ops, token: %s, role: admin}]
`, testAdminToken)))
	daemon := startCourier(t, nil, "run", "--config", cfg)
	main := "http://" + daemon.waitOutput(httpAddrRE, 20*time.Second)
	admin := "http://" + daemon.waitOutput(adminAddrRE, 5*time.Second)
	daemon.waitOutput(regexp.MustCompile(`msg="worker pool started"`), 20*time.Second)
	if code, body := apiRequest(t, "POST", admin+"/v1/queues/q/jobs", testAdminToken, `{"delay": "1h"}`); code != 201 {
		t.Errorf("enqueue on admin.addr: %d %s", code, body)
	}
	if code, _ := apiRequest(t, "GET", main+"/v1/queues", testAdminToken, ""); code != 404 {
		t.Errorf("the main listener serves the API too: %d", code)
	}
	if code, _ := apiRequest(t, "GET", main+"/metrics", "", ""); code != 200 {
		t.Errorf("/metrics: %d", code)
	}
	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestRunWithoutTokens: with no token the API is not served (and a
// listener of its own is refused at start); the daemon still works.
func TestRunWithoutTokens(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	daemon := startCourier(t, nil, "run", "--config", writeConfig(t, logConfig(addr, prefix, "127.0.0.1:0")))
	base := "http://" + daemon.waitOutput(httpAddrRE, 20*time.Second)
	daemon.waitOutput(regexp.MustCompile(`msg="HTTP API disabled" reason="admin.tokens: no API token is configured`), 5*time.Second)
	code, body := apiRequest(t, "POST", base+"/v1/queues/q/jobs", "", `{}`)
	if code != 404 || !strings.Contains(body, "admin.tokens") || !strings.Contains(body, `"code":"not_found"`) {
		t.Errorf("the disabled API: %d %s", code, body)
	}
	daemon.waitOutput(regexp.MustCompile(`msg="worker pool started"`), 20*time.Second)
	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}

	cfg := writeConfig(t, apiConfig(addr, prefix, "  addr: 127.0.0.1:0\n"))
	code, out, errOut := courierEnv(t, nil, nil, "run", "--config", cfg)
	if code != 1 || out != "" || !strings.Contains(errOut, "\n  admin.tokens: no API token is configured") || strings.Contains(errOut, "courier starting") {
		t.Errorf("admin.addr without a token: exit %d, %q, stderr:\n%s", code, out, errOut)
	}
}

// TestDevAPI: courier dev serves the API without a token, on loopback
// only, and says so loudly.
func TestDevAPI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	dev := startCourier(t, nil, "dev", "--http-addr", "127.0.0.1:0", "--demo-jobs=false")
	base := "http://" + dev.waitOutput(httpAddrRE, 20*time.Second)
	dev.waitOutput(regexp.MustCompile(`HTTP API WITHOUT AUTHENTICATION`), 5*time.Second)
	dev.waitOutput(regexp.MustCompile(`msg="worker pool started"`), 20*time.Second)
	if code, body := apiRequest(t, "POST", base+"/v1/queues/demo/jobs", "", `{"id": "via-api", "payload": "hi"}`); code != 201 {
		t.Fatalf("enqueue: %d %s", code, body)
	}
	dev.waitOutput(regexp.MustCompile(`msg=job queue=demo id=via-api attempt=1`), 10*time.Second)
	if !strings.Contains(dev.stdout.String(), "/v1/queues/demo/jobs") {
		t.Errorf("dev does not print how to use the API:\n%s", dev.stdout.String())
	}
	dev.signal(syscall.SIGTERM)
	if code := dev.wait(15 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}

	for _, addr := range []string{"0.0.0.0:0", ":0", "10.0.0.1:0"} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		code, _, errOut := runCLI(t, ctx, "dev", "--http-addr", addr)
		cancel()
		if code != 2 || !strings.Contains(errOut, "loopback") {
			t.Errorf("dev --http-addr %s: exit %d, %s", addr, code, errOut)
		}
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

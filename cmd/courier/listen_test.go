package main

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// The tests in this file check the listeners courier run builds from its
// configuration (listen.go): which listener serves what, and over TLS.

var (
	httpsAddrRE    = regexp.MustCompile(`"http listening" addr=(127\.0\.0\.1:\d+) endpoints="/healthz /readyz" tls=true`)
	adminTLSAddrRE = regexp.MustCompile(`"admin API listening" addr=(127\.0\.0\.1:\d+) endpoints="/v1/ /ui/" tls=true`)
	metricsAddrRE  = regexp.MustCompile(`"metrics listening" addr=(127\.0\.0\.1:\d+) endpoints=/metrics tls=true`)
)

// randomToken returns an API token as `openssl rand -hex 32` makes one:
// strong enough for admin.tokens.
func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// getWith returns the status and body of GET url sent by client with an
// optional bearer token, or the error of the request.
func getWith(t *testing.T, client *http.Client, url, token string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), nil
}

// TestRunListeners: with http.tls, http.metrics_addr and admin.addr with
// admin.tls, courier run serves the probes on http.addr, /metrics on
// metrics_addr and the API on admin.addr, each over HTTPS only, and none
// of them on another listener.
func TestRunListeners(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	ca := testkit.NewCA(t)
	httpCert, httpKey := ca.ServerFiles(t)
	adminCert, adminKey := ca.ServerFiles(t)
	token := randomToken(t)
	cfg := writeConfig(t, fmt.Sprintf(`
redis: {addr: [%q], prefix: %s}
http:
  addr: 127.0.0.1:0
  metrics_addr: 127.0.0.1:0
  tls: {cert_file: %s, key_file: %s}
admin:
  addr: 127.0.0.1:0
  tls: {cert_file: %s, key_file: %s}
  tokens:
    - {name: ops, token: %s, role: admin}
queues: {q: {handler: log}}
`, addr, prefix, httpCert, httpKey, adminCert, adminKey, token))
	daemon := startCourier(t, nil, "run", "--config", cfg)
	httpAddr := daemon.waitOutput(httpsAddrRE, 20*time.Second)
	adminAddr := daemon.waitOutput(adminTLSAddrRE, 20*time.Second)
	metricsAddr := daemon.waitOutput(metricsAddrRE, 20*time.Second)
	// The API answers 200 once the pool runs on Redis.
	daemon.waitOutput(poolStartedRE, 20*time.Second)

	// No idle connections: none may hold the daemon's shutdown.
	https := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true,
	}}
	tests := []struct {
		name, url, token string
		code             int
		inBody           []string
	}{
		{"probe on http.addr", "https://" + httpAddr + "/healthz", "", http.StatusOK, nil},
		{"no /metrics on http.addr", "https://" + httpAddr + "/metrics", "", http.StatusNotFound, nil},
		{"no API on http.addr", "https://" + httpAddr + "/v1/queues", token, http.StatusNotFound, nil},
		{"/metrics on metrics_addr", "https://" + metricsAddr + "/metrics", "", http.StatusOK, []string{
			`courier_http_connections{listener="http.addr"}`,
			`courier_http_connections{listener="http.metrics_addr"} 1`, // this scrape's
			`courier_http_connections{listener="admin.addr"}`,
		}},
		{"no API on metrics_addr", "https://" + metricsAddr + "/v1/queues", token, http.StatusNotFound, nil},
		{"API on admin.addr", "https://" + adminAddr + "/v1/queues", token, http.StatusOK, []string{`"q"`}},
		{"API on admin.addr without a token", "https://" + adminAddr + "/v1/queues", "", http.StatusUnauthorized, nil},
	}
	for _, tt := range tests {
		code, body, err := getWith(t, https, tt.url, tt.token)
		if err != nil || code != tt.code {
			t.Errorf("%s: GET %s: %d %v, want %d:\n%s", tt.name, tt.url, code, err, tt.code, body)
			continue
		}
		if strings.HasSuffix(tt.url, "/metrics") {
			body = grepLines(body, "courier_http_connections")
		}
		for _, s := range tt.inBody {
			if !strings.Contains(body, s) {
				t.Errorf("%s: GET %s: no %s in the body:\n%s", tt.name, tt.url, s, body)
			}
		}
	}

	for _, a := range []string{httpAddr, metricsAddr, adminAddr} {
		if code, _, err := getWith(t, probeClient, "http://"+a+"/healthz", ""); err == nil && code < 400 {
			t.Errorf("plain HTTP to the TLS listener %s: %d", a, code)
		}
	}
	untrusting := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if _, _, err := getWith(t, untrusting, "https://"+httpAddr+"/healthz", ""); err == nil {
		t.Error("a client that does not trust the CA verified http.addr's certificate")
	}

	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestInsecureSkipVerifyWarning: courier run warns at start when it does
// not check the Redis server's certificate, and only then; the warning
// does not stop it. Nothing listens on the Redis address: the daemon
// retries until SIGTERM, which it ends with exit code 0.
func TestInsecureSkipVerifyWarning(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	tests := []struct {
		name   string
		tls    string
		warned bool
	}{
		{"insecure_skip_verify", "{enabled: true, insecure_skip_verify: true}", true},
		{"verified", "{enabled: true}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := writeConfig(t, fmt.Sprintf("redis: {addr: [127.0.0.1:1], prefix: %s, tls: %s}\nhttp: {addr: 127.0.0.1:0}\nqueues: {q: {handler: log}}\n",
				testkit.Prefix(t), tt.tls))
			daemon := startCourier(t, nil, "run", "--config", cfg)
			daemon.waitOutput(retryingRE, 20*time.Second)
			daemon.signal(syscall.SIGTERM)
			if code := daemon.wait(15 * time.Second); code != 0 {
				t.Errorf("exit code %d after SIGTERM, want 0", code)
			}
			var warnings []string
			for _, l := range lines(daemon.stderr.String()) {
				if strings.Contains(l, "level=WARN") && strings.Contains(l, "redis.tls.insecure_skip_verify") {
					warnings = append(warnings, l)
				}
			}
			want := 0
			if tt.warned {
				want = 1
			}
			if len(warnings) != want {
				t.Errorf("%d WARN lines name redis.tls.insecure_skip_verify, want %d:\n%s", len(warnings), want, daemon.stderr.String())
			}
		})
	}
}

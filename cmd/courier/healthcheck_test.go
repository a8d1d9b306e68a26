package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/internal/testkit"
)

// TestHealthcheck: courier healthcheck, as the image's HEALTHCHECK runs
// it, exits 0 against a ready daemon, found from the configuration's
// http.addr or given by --url, and 1 against a closed port and a daemon
// that drains, printing one line each time.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	daemon := startCourier(t, nil, "run", "--config", writeConfig(t, logConfig(addr, prefix, "127.0.0.1:0")))
	httpAddr := daemon.waitOutput(httpAddrRE, 20*time.Second)
	// On a wildcard address the probe goes to loopback.
	port := httpAddr[strings.LastIndex(httpAddr, ":")+1:]
	wildcard := writeConfig(t, fmt.Sprintf("http: {addr: \"0.0.0.0:%s\"}\n", port))

	probes := map[string][]string{
		"--url":                 {"healthcheck", "--url", "http://" + httpAddr + "/readyz"},
		"http.addr of a file":   {"healthcheck", "--config", writeConfig(t, logConfig(addr, prefix, httpAddr))},
		"a wildcard http.addr":  {"healthcheck", "--config", wildcard},
		"http.addr of the env.": {"healthcheck"},
	}
	env := []string{"COURIER_HTTP__ADDR=" + httpAddr}
	testkit.EventuallyState(t, 20*time.Second, func() (bool, string) {
		code, stdout, stderr := courierEnv(t, env, nil, probes["--url"]...)
		return code == 0, stdout + stderr
	})
	for name, args := range probes {
		code, stdout, stderr := courierEnv(t, env, nil, args...)
		if want := "ready: GET http://127.0.0.1:" + port + "/readyz: 200\n"; code != 0 || stdout != want || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and %q", name, code, stdout, stderr, want)
		}
	}

	code, stdout, stderr := courierEnv(t, env, nil, "healthcheck", "--json")
	if want := `"url": "http://127.0.0.1:` + port + `/readyz"`; code != 0 || !strings.Contains(stdout, `"ready": true`) || !strings.Contains(stdout, want) {
		t.Errorf("--json: exit %d, stdout %q, stderr %q; want 0, ready and %s", code, stdout, stderr, want)
	}

	code, stdout, stderr = courierEnv(t, nil, nil, "healthcheck", "--url", "http://"+closedAddr(t)+"/readyz", "--timeout", "2s")
	if code != 1 || stdout != "" || len(lines(stderr)) != 1 || !strings.Contains(stderr, "courier healthcheck: not ready: GET http://") {
		t.Errorf("closed port: exit %d, stdout %q, stderr %q; want 1 and one line", code, stdout, stderr)
	}

	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}
	code, _, stderr = courierEnv(t, env, nil, "healthcheck")
	if code != 1 || !strings.Contains(stderr, "not ready") {
		t.Errorf("after the daemon stopped: exit %d, stderr %q; want 1", code, stderr)
	}
}

// TestHealthcheckTLS: with http.tls the probe speaks HTTPS to the
// daemon's own listener, whatever names its certificate holds; /readyz
// answering 503 is not ready.
func TestHealthcheckTLS(t *testing.T) {
	t.Parallel()
	ca := testkit.NewCA(t)
	certFile, keyFile := ca.ServerFiles(t)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	var status atomic.Int64
	status.Store(http.StatusOK)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
		fmt.Fprintln(w, "draining")
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	cfg := writeConfig(t, fmt.Sprintf("http: {addr: %q, tls: {cert_file: %q, key_file: %q}}\n", addr, certFile, keyFile))
	if _, err := config.Load(config.Sources{File: cfg}); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t, t.Context(), "healthcheck", "--config", cfg)
	if want := "ready: GET https://" + addr + "/readyz: 200\n"; code != 0 || stdout != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, stdout, stderr, want)
	}
	status.Store(http.StatusServiceUnavailable)
	code, _, stderr = runCLI(t, t.Context(), "healthcheck", "--config", cfg)
	if want := "courier healthcheck: not ready: GET https://" + addr + "/readyz: 503 draining\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

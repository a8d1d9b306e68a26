package server

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// tlsFiles writes a server certificate of ca (serial) and its key to dir.
func tlsFiles(t *testing.T, ca *testkit.CA, dir string, serial int64, mod time.Time) (certFile, keyFile string) {
	t.Helper()
	c, k := ca.Issue(t, serial, false)
	return writeFile(t, dir, "tls.crt", c, mod), writeFile(t, dir, "tls.key", k, mod)
}

// writeFile writes data to name in dir and sets its modification time to
// mod, so that a rewrite within the file system's time granularity still
// reads as a change.
func writeFile(t *testing.T, dir, name string, data []byte, mod time.Time) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveTLS serves 204 over TLS with cfg until the test ends; hits counts
// the requests that reached the handler.
func serveTLS(t *testing.T, cfg *tls.Config) (s capped, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv, err := ListenHandler(Listener{Key: "http.addr", Addr: "127.0.0.1:0", TLS: cfg, Logger: quiet},
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			hits.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
	if err != nil {
		t.Fatal(err)
	}
	runServer(t, srv)
	return capped{Server: srv, conns: srv.ln.(*capListener)}, hits
}

// httpsGet sends GET / to addr over TLS with cfg on a new connection and
// returns the status and the connection's state.
func httpsGet(t *testing.T, addr string, cfg *tls.Config) (int, *tls.ConnectionState, error) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	resp, err := client.Get("https://" + addr + "/")
	if err != nil {
		return 0, nil, err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.TLS, nil
}

// TestTLS: HTTPS is served with a certificate a client trusting the CA
// verifies; plain HTTP, untrusting clients and TLS below 1.2 are refused;
// a client that never starts its handshake holds up no one.
func TestTLS(t *testing.T) {
	t.Parallel()
	ca := testkit.NewCA(t)
	certFile, keyFile := tlsFiles(t, ca, t.TempDir(), 2, time.Now())
	cfg, err := TLSConfig(certFile, keyFile, "", quiet)
	if err != nil {
		t.Fatal(err)
	}
	s, hits := serveTLS(t, cfg)
	addr := s.Addr()

	dialFrom(t, "127.0.0.1", addr) // connected, never starts a handshake: must hold up no one
	code, state, err := httpsGet(t, addr, &tls.Config{RootCAs: ca.Pool()})
	if err != nil {
		t.Fatalf("HTTPS with the CA trusted: %v", err)
	}
	if code != http.StatusNoContent || state.PeerCertificates[0].SerialNumber.Int64() != 2 {
		t.Errorf("HTTPS: %d, serial %v", code, state.PeerCertificates[0].SerialNumber)
	}

	if _, _, err := httpsGet(t, addr, &tls.Config{}); err == nil {
		t.Error("a client that does not trust the CA verified the certificate")
	}
	if _, _, err := httpsGet(t, addr, &tls.Config{RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS11}); err == nil {
		t.Error("TLS 1.1 was accepted")
	}
	before := hits.Load()
	if resp, err := http.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("plain HTTP to a TLS listener: %d", resp.StatusCode)
		}
	}
	if hits.Load() != before {
		t.Error("a plain HTTP request reached the handler of a TLS listener")
	}
	// The connections under TLS are forgotten when closed, served or not;
	// the silent one is still open.
	s.waitOpen(t, 1)
}

// TestTLSRotation: a certificate replaced on disk is served to new
// connections without a restart.
func TestTLSRotation(t *testing.T) {
	t.Parallel()
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := tlsFiles(t, ca, dir, 2, time.Now().Add(-time.Minute))
	cfg, err := TLSConfig(certFile, keyFile, "", quiet)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := serveTLS(t, cfg)
	addr := s.Addr()
	serial := func() int64 {
		_, state, err := httpsGet(t, addr, &tls.Config{RootCAs: ca.Pool()})
		if err != nil {
			t.Fatalf("HTTPS: %v", err)
		}
		return state.PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != 2 {
		t.Fatalf("serial %d, want 2", got)
	}
	tlsFiles(t, ca, dir, 3, time.Now())
	testkit.Poll{Every: 100 * time.Millisecond}.Eventually(t, 10*time.Second, "the rotated certificate",
		func() bool { return serial() == 3 })
}

// TestCertReloader: the files are looked at once a second at most; a pair
// that fails to load is logged once and the previous one kept.
func TestCertReloader(t *testing.T) {
	t.Parallel()
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	mod := time.Now().Add(-time.Hour)
	certFile, keyFile := tlsFiles(t, ca, dir, 2, mod)
	var logs testkit.Buffer
	now := time.Now()
	r, err := newCertReloader(certFile, keyFile, slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	serial := func() int64 {
		c, err := r.getCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.SerialNumber.Int64()
	}
	step := func(serialWant int64, what string) {
		t.Helper()
		if got := serial(); got != serialWant {
			t.Errorf("%s: serial %d, want %d", what, got, serialWant)
		}
	}

	tlsFiles(t, ca, dir, 3, mod.Add(time.Minute))
	now = now.Add(reloadEvery / 2)
	step(2, "within a second of the last look")
	now = now.Add(reloadEvery / 2)
	step(3, "a second later")

	writeFile(t, dir, "tls.key", []byte("not a key"), mod.Add(2*time.Minute))
	for range 3 {
		now = now.Add(reloadEvery)
		step(3, "a broken pair on disk")
	}
	if n := strings.Count(logs.String(), "TLS certificate not reloaded"); n != 1 {
		t.Errorf("the broken pair was logged %d times, want once:\n%s", n, logs.String())
	}

	tlsFiles(t, ca, dir, 4, mod.Add(3*time.Minute))
	now = now.Add(reloadEvery)
	step(4, "a good pair after a broken one")
}

// TestMutualTLS: with a client CA, a client needs a certificate it signed.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	ca, other := testkit.NewCA(t), testkit.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := tlsFiles(t, ca, dir, 2, time.Now())
	caFile := writeFile(t, dir, "client-ca.pem", ca.PEM(), time.Now())
	cfg, err := TLSConfig(certFile, keyFile, caFile, quiet)
	if err != nil {
		t.Fatal(err)
	}
	s, hits := serveTLS(t, cfg)
	addr := s.Addr()
	tests := []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{"no client certificate", nil, false},
		{"a certificate of another CA", []tls.Certificate{other.ClientCert(t)}, false},
		{"a certificate of the client CA", []tls.Certificate{ca.ClientCert(t)}, true},
	}
	for _, tt := range tests {
		before := hits.Load()
		code, _, err := httpsGet(t, addr, &tls.Config{RootCAs: ca.Pool(), Certificates: tt.certs})
		switch {
		case tt.ok && (err != nil || code != http.StatusNoContent):
			t.Errorf("%s: %d %v", tt.name, code, err)
		case !tt.ok && (err == nil || hits.Load() != before):
			t.Errorf("%s: served", tt.name)
		}
	}
}

func TestTLSConfigErrors(t *testing.T) {
	t.Parallel()
	ca := testkit.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := tlsFiles(t, ca, dir, 2, time.Now())
	notPEM := writeFile(t, dir, "ca.txt", []byte("no certificate here"), time.Now())
	tests := []struct {
		name                 string
		cert, key, ca, inErr string
	}{
		{"no files", "", "", "", "needs a certificate file"},
		{"missing certificate", dir + "/nope.crt", keyFile, "", "load the TLS certificate"},
		{"key for another certificate", certFile, notPEM, "", "load the TLS certificate"},
		{"missing client CA", certFile, keyFile, dir + "/nope.pem", "read the client CA"},
		{"client CA not PEM", certFile, keyFile, notPEM, "holds no PEM certificate"},
	}
	for _, tt := range tests {
		if _, err := TLSConfig(tt.cert, tt.key, tt.ca, quiet); err == nil || !strings.Contains(err.Error(), tt.inErr) {
			t.Errorf("%s: %v; want an error with %q", tt.name, err, tt.inErr)
		}
	}
}

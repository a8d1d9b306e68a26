package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func start(t *testing.T, ready func(context.Context) error) (*Server, context.CancelFunc, chan error) {
	t.Helper()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "m 1\n") })
	s, err := Listen(Options{Listener: Listener{Addr: "127.0.0.1:0", Logger: quiet}, Ready: ready, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, cancel, done
}

var quiet = slog.New(slog.DiscardHandler)

// runServer runs s until the test ends.
func runServer(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestEndpoints(t *testing.T) {
	t.Parallel()
	var notReady atomic.Pointer[error]
	s, _, _ := start(t, func(context.Context) error {
		if p := notReady.Load(); p != nil {
			return *p
		}
		return nil
	})
	base := "http://" + s.Addr()
	tests := []struct {
		path   string
		code   int
		inBody string
	}{
		{"/healthz", 200, `"ok"`},
		{"/readyz", 200, `"ready"`},
		{"/metrics", 200, "m 1"},
		{"/nope", 404, ""},
	}
	for _, tt := range tests {
		if code, body := get(t, base+tt.path); code != tt.code || !strings.Contains(body, tt.inBody) {
			t.Errorf("GET %s: %d %q; want %d and %q", tt.path, code, body, tt.code, tt.inBody)
		}
	}
	err := errors.New("draining")
	notReady.Store(&err)
	if code, body := get(t, base+"/readyz"); code != 503 || !strings.Contains(body, "draining") {
		t.Errorf("GET /readyz while not ready: %d %q", code, body)
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("GET /healthz while not ready: %d; alive is not ready", code)
	}
	resp, err2 := http.Post(base+"/healthz", "text/plain", nil)
	if err2 != nil {
		t.Fatal(err2)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d", resp.StatusCode)
	}
}

func TestReadyHasATimeout(t *testing.T) {
	t.Parallel()
	var sawDeadline atomic.Bool
	s, _, _ := start(t, func(ctx context.Context) error {
		_, ok := ctx.Deadline()
		sawDeadline.Store(ok)
		return nil
	})
	get(t, "http://"+s.Addr()+"/readyz")
	if !sawDeadline.Load() {
		t.Error("the readiness check ran without a deadline")
	}
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	s, cancel, done := start(t, func(context.Context) error { return nil })
	cancel()
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	if resp, err := http.Get("http://" + s.Addr() + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("still serving after Run returned")
	}
}

func TestListenErrors(t *testing.T) {
	t.Parallel()
	s, _, _ := start(t, func(context.Context) error { return nil })
	ready := func(context.Context) error { return nil }
	_, err := Listen(Options{Listener: Listener{Addr: s.Addr(), Logger: quiet}, Ready: ready})
	if err == nil || !strings.Contains(err.Error(), "http.addr") {
		t.Errorf("Listen on a taken port: %v; want an error naming http.addr", err)
	}
	ok := Listener{Key: "admin.addr", Addr: "127.0.0.1:0", Logger: quiet}
	tests := []struct {
		name   string
		mutate func(*Listener)
		inErr  string
	}{
		{"no key", func(l *Listener) { l.Key = "" }, "Listener.Key is required"},
		{"no logger", func(l *Listener) { l.Logger = nil }, "admin.addr: Listener.Logger is required"},
		{"negative cap", func(l *Listener) { l.MaxConnections = -1 }, "negative MaxConnections"},
		{"negative client cap", func(l *Listener) { l.MaxConnectionsPerClient = -1 }, "negative MaxConnectionsPerClient"},
		{"TLS without a certificate", func(l *Listener) { l.TLS = &tls.Config{} }, "no certificate"},
		{"bad address", func(l *Listener) { l.Addr = "127.0.0.1:-1" }, "admin.addr: listen on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := ok
			tt.mutate(&l)
			if _, err := ListenHandler(l, http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), tt.inErr) {
				t.Errorf("ListenHandler: %v; want an error with %q", err, tt.inErr)
			}
		})
	}
	if _, err := Listen(Options{Listener: Listener{Addr: "127.0.0.1:0", Logger: quiet}}); err == nil {
		t.Error("Listen without Ready succeeded")
	}
	if _, err := ListenHandler(ok, nil); err == nil {
		t.Error("ListenHandler without a handler succeeded")
	}
}

// TestMetricsOnTheirOwnListener: without Options.Metrics the main listener
// has no /metrics, and a listener of their own serves them.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	t.Parallel()
	main, err := Listen(Options{Listener: Listener{Addr: "127.0.0.1:0", Logger: quiet},
		Ready: func(context.Context) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	runServer(t, main)
	metrics, err := ListenHandler(Listener{Key: "http.metrics_addr", Addr: "127.0.0.1:0", Logger: quiet},
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "m 1\n") }))
	if err != nil {
		t.Fatal(err)
	}
	runServer(t, metrics)
	if code, _ := get(t, "http://"+main.Addr()+"/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the main listener: %d; want 404", code)
	}
	if code, _ := get(t, "http://"+main.Addr()+"/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz: %d", code)
	}
	if code, body := get(t, "http://"+metrics.Addr()+"/metrics"); code != http.StatusOK || body != "m 1\n" {
		t.Errorf("GET /metrics on its own listener: %d %q", code, body)
	}
}

// TestListenHandler: a listener for one handler applies its timeouts, drops
// a client that sends its request too slowly, and stops with its context.
func TestListenHandler(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	s, err := ListenHandler(Listener{Key: "admin.addr", Addr: "127.0.0.1:0",
		Timeouts: Timeouts{Read: 300 * time.Millisecond, Write: time.Second}, Logger: quiet}, h)
	if err != nil {
		t.Fatal(err)
	}
	if s.http.ReadTimeout != 300*time.Millisecond || s.http.WriteTimeout != time.Second ||
		s.http.IdleTimeout != DefaultTimeouts.Idle || s.http.ReadHeaderTimeout != 300*time.Millisecond {
		t.Errorf("timeouts: read %v write %v idle %v header %v", s.http.ReadTimeout, s.http.WriteTimeout,
			s.http.IdleTimeout, s.http.ReadHeaderTimeout)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	resp, err := http.Post("http://"+s.Addr()+"/v1/x", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("POST: %d", resp.StatusCode)
	}

	// A body that never finishes: the connection is cut at the read
	// timeout, not held open.
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, _ := io.ReadAll(conn)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("a slow client held the connection for %s (read %q)", elapsed, rest)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

package api

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestListen: the API's own listener serves it with its timeouts, drops a
// client that sends its request too slowly, and stops with its context.
func TestListen(t *testing.T) {
	t.Parallel()
	h, err := New(Options{Backend: func() Backend { return nil }, InsecureNoAuth: true, WriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen(h, ServerOptions{Addr: "127.0.0.1:0", ReadTimeout: 300 * time.Millisecond, WriteTimeout: time.Second,
		IdleTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if s.http.ReadTimeout != 300*time.Millisecond || s.http.WriteTimeout != time.Second || s.http.IdleTimeout != time.Second ||
		s.http.ReadHeaderTimeout == 0 {
		t.Errorf("timeouts: %+v", s.http)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	resp, err := http.Get("http://" + s.Addr() + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/openapi.json: %d", resp.StatusCode)
	}

	// A body that never finishes: the connection is cut at the read
	// timeout, not held open.
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, "POST /v1/queues/q/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, _ := io.ReadAll(bufio.NewReader(conn))
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("a slow client held the connection for %s (read %q)", elapsed, rest)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := Listen(h, ServerOptions{Addr: "127.0.0.1:-1", Logger: slog.New(slog.DiscardHandler)}); err == nil || !strings.Contains(err.Error(), "admin.addr") {
		t.Errorf("Listen on a bad address: %v", err)
	}
}

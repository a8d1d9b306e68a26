package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func start(t *testing.T, ready func(context.Context) error) (*Server, context.CancelFunc, chan error) {
	t.Helper()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "m 1\n") })
	s, err := Listen(Options{Addr: "127.0.0.1:0", Ready: ready, Metrics: metrics, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return s, cancel, done
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
	if _, err := http.Get("http://" + s.Addr() + "/healthz"); err == nil {
		t.Error("still serving after Run returned")
	}
}

func TestListenErrors(t *testing.T) {
	t.Parallel()
	s, _, _ := start(t, func(context.Context) error { return nil })
	_, err := Listen(Options{Addr: s.Addr(), Ready: func(context.Context) error { return nil },
		Metrics: http.NotFoundHandler(), Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "http.addr") {
		t.Errorf("Listen on a taken port: %v; want an error naming http.addr", err)
	}
	if _, err := Listen(Options{Addr: "127.0.0.1:0"}); err == nil {
		t.Error("Listen without Ready/Metrics/Logger succeeded")
	}
}

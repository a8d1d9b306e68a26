// Package server is the daemon's HTTP listener: /healthz says the process is
// alive, /readyz that it can do work (Redis reachable, pool running, not
// draining), and /metrics serves the Prometheus registry it is given.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Options configure a Server.
type Options struct {
	// Addr is the host:port to listen on; port 0 picks a free port.
	Addr string
	// Ready reports whether the daemon can do work; nil means ready. It is
	// called on each /readyz request with a context bounded by ReadyTimeout.
	Ready func(ctx context.Context) error
	// Metrics serves /metrics.
	Metrics http.Handler
	// Logger receives serving errors.
	Logger *slog.Logger
}

// Server timeouts. A scrape or a probe is small; slow clients must not hold
// connections open.
const (
	ReadyTimeout      = 2 * time.Second
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	shutdownGrace     = 5 * time.Second
)

// Server is the HTTP listener. Make one with Listen, add routes with Handle,
// then call Run.
type Server struct {
	ln   net.Listener
	mux  *http.ServeMux
	http *http.Server
	log  *slog.Logger
}

// Listen binds opts.Addr at once, so a taken port fails the start and the
// bound address is known before Run.
func Listen(opts Options) (*Server, error) {
	if opts.Ready == nil || opts.Metrics == nil || opts.Logger == nil {
		return nil, errors.New("server: Ready, Metrics and Logger are required")
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("http.addr: listen on %s: %w", opts.Addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
		defer cancel()
		if err := opts.Ready(ctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	mux.Handle("GET /metrics", opts.Metrics)
	s := &Server{
		ln:  ln,
		mux: mux,
		log: opts.Logger,
		http: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       idleTimeout,
			ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
		},
	}
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Handle adds a route (http.ServeMux pattern syntax). Call it before Run.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Run serves until ctx ends, then lets requests in flight finish for a few
// seconds and returns nil. It returns an error only when serving fails.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := s.http.Shutdown(shutdownCtx); err != nil {
		s.log.Warn("http server did not stop cleanly", "err", err)
		_ = s.http.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

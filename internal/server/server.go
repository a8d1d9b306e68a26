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

// ReadyTimeout bounds a /readyz check.
const (
	ReadyTimeout      = 2 * time.Second
	readHeaderTimeout = 5 * time.Second
	shutdownGrace     = 5 * time.Second
)

// Timeouts bound a listener's connections: reading a request, writing its
// response, and an idle keep-alive connection. Slow clients must not hold
// connections open.
type Timeouts struct {
	Read, Write, Idle time.Duration
}

// DefaultTimeouts are the main listener's, and what zero fields take.
var DefaultTimeouts = Timeouts{Read: 30 * time.Second, Write: 30 * time.Second, Idle: 2 * time.Minute}

// Server is an HTTP listener. Make one with Listen (the daemon's main
// listener, to which Handle adds routes) or ListenHandler, then call Run.
type Server struct {
	ln   net.Listener
	mux  *http.ServeMux // nil for ListenHandler
	http *http.Server
	log  *slog.Logger
	name string // in errors and logs
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
	s := serve(ln, "http server", mux, DefaultTimeouts, opts.Logger)
	s.mux = mux
	return s, nil
}

// ListenHandler binds addr at once and returns a Server for h alone, with
// timeouts t (zero fields take DefaultTimeouts); key names the configuration
// key of addr in a listen error. The admin API's own listener (admin.addr)
// is one.
func ListenHandler(key, addr string, h http.Handler, t Timeouts, log *slog.Logger) (*Server, error) {
	if h == nil || log == nil {
		return nil, errors.New("server: ListenHandler needs a handler and a logger")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", key, addr, err)
	}
	return serve(ln, key+" server", h, t, log), nil
}

func serve(ln net.Listener, name string, h http.Handler, t Timeouts, log *slog.Logger) *Server {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	read := or(t.Read, DefaultTimeouts.Read)
	return &Server{
		ln:   ln,
		log:  log,
		name: name,
		http: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: min(read, readHeaderTimeout),
			ReadTimeout:       read,
			WriteTimeout:      or(t.Write, DefaultTimeouts.Write),
			IdleTimeout:       or(t.Idle, DefaultTimeouts.Idle),
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
	}
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Handle adds a route (http.ServeMux pattern syntax) to a Server made by
// Listen. Call it before Run.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Run serves until ctx ends, then lets requests in flight finish for a few
// seconds and returns nil. It returns an error only when serving fails.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %w", s.name, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := s.http.Shutdown(shutdownCtx); err != nil {
		s.log.Warn(s.name+" did not stop cleanly", "err", err)
		_ = s.http.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

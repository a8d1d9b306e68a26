package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
)

// Options configure the daemon's main listener (Listen).
type Options struct {
	// Listener says where and how to listen; its Key defaults to
	// "http.addr".
	Listener
	// Ready reports whether the daemon can do work; nil means ready. It is
	// called on each /readyz request with a context bounded by ReadyTimeout.
	// Required.
	Ready func(ctx context.Context) error
	// Metrics, when set, serves /metrics on this listener. Leave it nil to
	// serve the metrics on a listener of their own (ListenHandler).
	Metrics http.Handler
}

// Server is an HTTP listener. Make one with Listen (the daemon's main
// listener, to which Handle adds routes) or ListenHandler, then call Run.
type Server struct {
	ln   net.Listener // the capped listener; TLS goes on top in Run
	mux  *http.ServeMux
	http *http.Server
	log  *slog.Logger
	name string // in errors and logs
}

// Listen binds the main listener at once, so a taken port fails the start
// and the bound address is known before Run.
func Listen(opts Options) (*Server, error) {
	if opts.Ready == nil {
		return nil, errors.New("server: Options.Ready is required")
	}
	if opts.Key == "" {
		opts.Key = "http.addr"
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
	if opts.Metrics != nil {
		mux.Handle("GET /metrics", opts.Metrics)
	}
	s, err := ListenHandler(opts.Listener, mux)
	if err != nil {
		return nil, err
	}
	s.mux = mux
	return s, nil
}

// ListenHandler binds l.Addr at once and returns a Server for h alone. The
// API's own listener (admin.addr) is one, and /metrics on
// http.metrics_addr another.
func ListenHandler(l Listener, h http.Handler) (*Server, error) {
	l, err := l.withDefaults()
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("server: %s: no handler", l.Key)
	}
	metrics, err := newConnMetrics(l.Registerer, l.Key)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", l.Key, l.Addr, err)
	}
	capped := newCapListener(ln, l, metrics)
	return &Server{
		ln:   capped,
		log:  l.Logger,
		name: l.Key + " server",
		http: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: min(l.Timeouts.Read, readHeaderTimeout),
			ReadTimeout:       l.Timeouts.Read,
			WriteTimeout:      l.Timeouts.Write,
			IdleTimeout:       l.Timeouts.Idle,
			MaxHeaderBytes:    64 << 10,
			ConnState:         capped.connState,
			// ServeTLS adds HTTP/2 to it; the handshake happens on the
			// connection's goroutine, under its read deadline, never in
			// Accept.
			TLSConfig: l.TLS,
			ErrorLog:  slog.NewLogLogger(l.Logger.Handler(), slog.LevelWarn),
		},
	}, nil
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
	go func() {
		if s.http.TLSConfig != nil {
			errc <- s.http.ServeTLS(s.ln, "", "") // the certificate comes from TLSConfig
			return
		}
		errc <- s.http.Serve(s.ln)
	}()
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

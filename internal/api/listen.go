package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServerOptions configure a listener of the API's own (admin.addr).
type ServerOptions struct {
	// Addr is the host:port to listen on; port 0 picks a free port.
	Addr string
	// ReadTimeout, WriteTimeout and IdleTimeout bound reading a request,
	// writing its response and an idle keep-alive connection. Defaults
	// 30s, 30s and 2m.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// Logger receives serving errors. Required.
	Logger *slog.Logger
}

// Server is the API on a listener of its own. Make one with Listen, then
// call Run.
type Server struct {
	ln   net.Listener
	http *http.Server
	log  *slog.Logger
}

// shutdownGrace is how long requests in flight may finish when Run stops.
const shutdownGrace = 5 * time.Second

// Listen binds opts.Addr at once, so that a taken port fails the start,
// and returns a Server for h.
func Listen(h http.Handler, opts ServerOptions) (*Server, error) {
	if h == nil || opts.Logger == nil {
		return nil, errors.New("api: Listen needs a handler and a logger")
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("admin.addr: listen on %s: %w", opts.Addr, err)
	}
	read := orDefault(opts.ReadTimeout, ReadTimeoutDefault)
	return &Server{
		ln:  ln,
		log: opts.Logger,
		http: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: min(read, 10*time.Second),
			ReadTimeout:       read,
			WriteTimeout:      orDefault(opts.WriteTimeout, WriteTimeoutDefault),
			IdleTimeout:       orDefault(opts.IdleTimeout, IdleTimeoutDefault),
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
		},
	}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Run serves until ctx ends, then lets requests in flight finish for a few
// seconds and returns nil. It returns an error only when serving fails.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("admin http server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := s.http.Shutdown(shutdownCtx); err != nil {
		s.log.Warn("admin http server did not stop cleanly", "err", err)
		_ = s.http.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admin http server: %w", err)
	}
	return nil
}

package main

import (
	"context"
	"crypto/tls"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seed-53d105c9/courier/internal/config"
	"github.com/seed-53d105c9/courier/internal/server"
)

// listen binds the daemon's HTTP listeners, the main one first: http.addr
// serves the probes, /metrics unless http.metrics_addr takes it, and the
// API unless admin.addr takes it. Each listener is capped by
// http.max_connections and http.max_connections_per_client.
func (d *daemon) listen(ready func(context.Context) error, metrics *prometheus.Registry, admin *adminAPI) ([]*server.Server, error) {
	h, c := &d.cfg.HTTP, &d.cfg.Admin
	httpTLS, err := d.tlsConfig(h.TLS)
	if err != nil {
		return nil, err
	}
	listener := func(key, addr string, t *tls.Config) server.Listener {
		return server.Listener{
			Key: key, Addr: addr, TLS: t,
			MaxConnections:          h.MaxConnections,
			MaxConnectionsPerClient: h.MaxConnectionsPerClient,
			Registerer:              metrics,
			Logger:                  d.log,
		}
	}
	scrape := promhttp.HandlerFor(metrics, promhttp.HandlerOpts{})

	opts := server.Options{Listener: listener("http.addr", h.Addr, httpTLS), Ready: ready}
	endpoints := "/healthz /readyz"
	if h.MetricsAddr == "" {
		opts.Metrics = scrape
		endpoints += " /metrics"
	}
	if c.Addr == "" {
		endpoints += " /v1/"
	}
	srv, err := server.Listen(opts)
	if err != nil {
		return nil, err
	}
	servers := []*server.Server{srv}
	if c.Addr == "" {
		srv.Handle("/v1/", admin.handler)
	}
	d.log.Info("http listening", "addr", srv.Addr(), "endpoints", endpoints, "tls", httpTLS != nil)
	if c.Addr == "" {
		d.warnOpen(admin, srv.Addr())
	}

	if c.Addr != "" {
		adminTLS, err := d.tlsConfig(c.TLS)
		if err != nil {
			return nil, err
		}
		l := listener("admin.addr", c.Addr, adminTLS)
		l.Timeouts = server.Timeouts{Read: c.ReadTimeout, Write: c.WriteTimeout, Idle: c.IdleTimeout}
		s, err := server.ListenHandler(l, admin.handler)
		if err != nil {
			return nil, err
		}
		servers = append(servers, s)
		d.log.Info("admin API listening", "addr", s.Addr(), "endpoints", "/v1/", "tls", adminTLS != nil)
		d.warnOpen(admin, s.Addr())
	}
	if h.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", scrape)
		s, err := server.ListenHandler(listener("http.metrics_addr", h.MetricsAddr, httpTLS), mux)
		if err != nil {
			return nil, err
		}
		servers = append(servers, s)
		d.log.Info("metrics listening", "addr", s.Addr(), "endpoints", "/metrics", "tls", httpTLS != nil)
	}
	return servers, nil
}

// tlsConfig returns the TLS configuration of a listener's tls section, or
// nil when it has no certificate.
func (d *daemon) tlsConfig(t config.ListenTLS) (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	return server.TLSConfig(t.CertFile, t.KeyFile, t.ClientCAFile, d.log)
}

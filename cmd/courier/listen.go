package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/cmd/internal/server"
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
		endpoints += " /v1/ /ui/"
	}
	srv, err := server.Listen(opts)
	if err != nil {
		return nil, err
	}
	servers := []*server.Server{srv}
	if c.Addr == "" {
		admin.mount(srv.Handle)
	}
	d.log.Info("http listening", "addr", srv.Addr(), "endpoints", endpoints, "tls", httpTLS != nil)
	if c.Addr == "" {
		d.warnOpen(admin, srv.Addr())
		d.announceUI(admin, srv.Addr(), httpTLS != nil)
	}

	if c.Addr != "" {
		adminTLS, err := d.tlsConfig(c.TLS)
		if err != nil {
			return nil, err
		}
		l := listener("admin.addr", c.Addr, adminTLS)
		l.Timeouts = server.Timeouts{Read: c.ReadTimeout, Write: c.WriteTimeout, Idle: c.IdleTimeout}
		mux := http.NewServeMux()
		admin.mount(mux.Handle)
		s, err := server.ListenHandler(l, mux)
		if err != nil {
			return nil, err
		}
		servers = append(servers, s)
		d.log.Info("admin API listening", "addr", s.Addr(), "endpoints", "/v1/ /ui/", "tls", adminTLS != nil)
		d.warnOpen(admin, s.Addr())
		d.announceUI(admin, s.Addr(), adminTLS != nil)
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

// announceUI logs the web UI's address, when it is served on addr.
func (d *daemon) announceUI(admin *adminAPI, addr string, tls bool) {
	if admin.uiServed {
		d.log.Info("web UI", "url", uiURL(addr, tls))
	}
}

// uiURL is the address of the web UI served on addr, for a browser: a
// listener on every address (0.0.0.0, [::]) is reached at localhost.
func uiURL(addr string, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
			addr = net.JoinHostPort("localhost", port)
		}
	}
	return scheme + "://" + addr + "/ui/"
}

// tlsConfig returns the TLS configuration of a listener's tls section, or
// nil when it has no certificate.
func (d *daemon) tlsConfig(t config.ListenTLS) (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	return server.TLSConfig(t.CertFile, t.KeyFile, t.ClientCAFile, d.log)
}

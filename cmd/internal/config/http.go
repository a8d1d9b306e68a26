package config

import "net"

// HTTP configures Courier's HTTP listeners: http.addr, which serves
// /healthz, /readyz, /metrics and, without admin.addr, the API under /v1;
// http.metrics_addr, which takes /metrics off it; and the connection
// limits of every listener, admin.addr's included.
type HTTP struct {
	// Addr is the main listener, host:port. Default HTTPAddrDefault.
	Addr string `koanf:"addr"`
	// MetricsAddr is a listener of /metrics's own, host:port; "" serves
	// /metrics on Addr. Default "".
	MetricsAddr string `koanf:"metrics_addr"`
	// TLS serves Addr and MetricsAddr over TLS. Default off.
	TLS ListenTLS `koanf:"tls"`
	// MaxConnections bounds the open connections of each listener (1 to
	// HTTPMaxConnectionsLimit): at the bound, the connection idle the
	// longest is closed to make room, or the new one is refused when none
	// is idle. Default HTTPMaxConnectionsDefault.
	MaxConnections int `koanf:"max_connections"`
	// MaxConnectionsPerClient bounds the open connections of one client IP
	// address to each listener (1 to MaxConnections); more are closed at
	// once. Default HTTPMaxConnectionsPerClientDefault.
	MaxConnectionsPerClient int `koanf:"max_connections_per_client"`
}

// Defaults and bounds of the http section.
const (
	HTTPAddrDefault                    = "127.0.0.1:9750"
	HTTPMaxConnectionsDefault          = 4096
	HTTPMaxConnectionsLimit            = 1_000_000
	HTTPMaxConnectionsPerClientDefault = 256
)

func httpDefault() HTTP {
	return HTTP{
		Addr:                    HTTPAddrDefault,
		MaxConnections:          HTTPMaxConnectionsDefault,
		MaxConnectionsPerClient: HTTPMaxConnectionsPerClientDefault,
	}
}

// validate adds a problem for every invalid http key; adminAddr is
// admin.addr, which http.metrics_addr must not repeat.
func (h *HTTP) validate(adminAddr string, ps *problems) {
	if err := checkHostPort(h.Addr); err != nil {
		ps.add("http.addr", "%v", err)
	}
	if h.MetricsAddr != "" {
		switch err := checkHostPort(h.MetricsAddr); {
		case err != nil:
			ps.add("http.metrics_addr", "%v", err)
		case sameListener(h.MetricsAddr, h.Addr):
			ps.add("http.metrics_addr", "is also http.addr; give /metrics another host:port, or \"\" to serve it on http.addr")
		case sameListener(h.MetricsAddr, adminAddr):
			ps.add("http.metrics_addr", "is also admin.addr; give /metrics another host:port")
		}
	}
	h.TLS.validate("http.tls", ps)
	if h.MaxConnections < 1 || h.MaxConnections > HTTPMaxConnectionsLimit {
		ps.add("http.max_connections", "must be 1 to %d (got %d)", HTTPMaxConnectionsLimit, h.MaxConnections)
	}
	if most := min(max(h.MaxConnections, 1), HTTPMaxConnectionsLimit); h.MaxConnectionsPerClient < 1 || h.MaxConnectionsPerClient > most {
		hint := ""
		if h.MaxConnectionsPerClient == HTTPMaxConnectionsPerClientDefault {
			hint = ", the default: set it too when lowering max_connections"
		}
		ps.add("http.max_connections_per_client", "must be 1 to http.max_connections, %d (got %d%s)", most, h.MaxConnectionsPerClient, hint)
	}
}

// sameListener reports whether two host:port addresses are written the
// same; port 0 picks a free port, so two of those never clash.
func sameListener(a, b string) bool {
	if a != b {
		return false
	}
	_, port, err := net.SplitHostPort(a)
	return err == nil && port != "0"
}

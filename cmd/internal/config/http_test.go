package config

import (
	"testing"
)

func TestHTTPDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.HTTP
	if h.Addr != "127.0.0.1:9750" || h.MetricsAddr != "" || h.TLS != (ListenTLS{}) || h.TLS.Enabled() ||
		h.MaxConnections != 4096 || h.MaxConnectionsPerClient != 256 {
		t.Errorf("http defaults: %+v", h)
	}
}

func TestHTTPKeys(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{
		File: writeFile(t, `
http:
  addr: 127.0.0.1:0
  metrics_addr: 127.0.0.1:0
  max_connections: 100
admin:
  addr: 127.0.0.1:0
`),
		Environ: []string{"COURIER_HTTP__MAX_CONNECTIONS_PER_CLIENT=10"},
	})
	if err != nil {
		t.Fatal(err) // port 0 is a free port each time: no clash
	}
	if h := cfg.HTTP; h.MetricsAddr != "127.0.0.1:0" || h.MaxConnections != 100 || h.MaxConnectionsPerClient != 10 {
		t.Errorf("http: %+v", h)
	}
}

func TestHTTPBadConfigs(t *testing.T) {
	t.Parallel()
	tests := []badConfig{
		{"bad metrics addr", "http:\n  metrics_addr: nope\n", nil, "http.metrics_addr", "host:port"},
		{"metrics addr is http addr", "http:\n  addr: 127.0.0.1:9750\n  metrics_addr: 127.0.0.1:9750\n", nil, "http.metrics_addr", "is also http.addr"},
		{"metrics addr is admin addr", "http:\n  metrics_addr: 127.0.0.1:9751\nadmin:\n  addr: 127.0.0.1:9751\n", nil, "http.metrics_addr", "is also admin.addr"},
		{"zero connections", "http:\n  max_connections: 0\n", nil, "http.max_connections", "1 to 1000000 (got 0)"},
		{"too many connections", "http:\n  max_connections: 1000001\n", nil, "http.max_connections", "1 to 1000000"},
		{"connections as text", "http:\n  max_connections: many\n", nil, "http.max_connections", "expected a whole number"},
		{"zero per client", "http:\n  max_connections_per_client: 0\n", nil, "http.max_connections_per_client", "1 to http.max_connections, 4096 (got 0)"},
		{"per client above the total", "http:\n  max_connections: 10\n  max_connections_per_client: 11\n", nil, "http.max_connections_per_client", "1 to http.max_connections, 10 (got 11)"},
		{"default per client above the total", "http:\n  max_connections: 100\n", nil, "http.max_connections_per_client", "(got 256, the default: set it too when lowering max_connections)"},
		{"env: per client", "", []string{"COURIER_HTTP__MAX_CONNECTIONS_PER_CLIENT=-1"}, "http.max_connections_per_client", "1 to"},
		{"unknown tls key", "http:\n  tls:\n    ca_file: /x\n", nil, "http.tls.ca_file", "unknown key"},
	}
	checkRefused(t, tests, nil)
}

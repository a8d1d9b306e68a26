package script

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
)

// newScript returns the script src called name, sent as it is: a script of
// the test's own, outside the catalog.
func newScript(name, src string, repeat Repeat) *Script {
	v := newVariant(src)
	return &Script{name: name, repeat: repeat, flagged: v, plain: v}
}

// meteredConn returns a Conn over client whose metrics go to a registry of
// the test's own, and that registry.
func meteredConn(t *testing.T, client rueidis.Client) (Conn, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.NewRedis(reg)
	if err != nil {
		t.Fatal(err)
	}
	return NewConn(client, m), reg
}

package server

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Why a connection was closed by the listener rather than served: the
// values of the reason label, a fixed set.
const (
	reasonOverCapacity = "over_capacity" // at MaxConnections, none idle to make room
	reasonPerClient    = "per_client"    // its address is at MaxConnectionsPerClient
	reasonEvicted      = "evicted"       // idle the longest when a new one came at the cap
)

// connMetrics are one listener's connection metrics. The listener label is
// a configuration key, so the series stay few.
type connMetrics struct {
	open    prometheus.Gauge
	refused map[string]prometheus.Counter // by reason, resolved once
}

func newConnMetrics(reg prometheus.Registerer, key string) (*connMetrics, error) {
	labels := prometheus.Labels{"listener": key}
	open := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "courier_http_connections",
		Help:        "Open connections of an HTTP listener.",
		ConstLabels: labels,
	})
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "courier_http_connections_refused_total",
		Help: "Connections an HTTP listener closed instead of serving, by reason: over_capacity, " +
			"per_client, or evicted (idle the longest when the listener was full).",
		ConstLabels: labels,
	}, []string{"reason"})
	if reg != nil { // else counted, never exported: no nil checks on the accept path
		var err error
		if open, err = Register(reg, open); err != nil {
			return nil, fmt.Errorf("server: %s: %w", key, err)
		}
		if refused, err = Register(reg, refused); err != nil {
			return nil, fmt.Errorf("server: %s: %w", key, err)
		}
	}
	m := &connMetrics{open: open, refused: make(map[string]prometheus.Counter)}
	for _, r := range []string{reasonOverCapacity, reasonPerClient, reasonEvicted} {
		m.refused[r] = refused.WithLabelValues(r) // every reason shows, at 0, before it first happens
	}
	return m, nil
}

// Register registers c, or returns the collector already registered in its
// place: a listener (or an API handler) made again on the same registry (a
// test, a restart in process) adds to the same series instead of failing.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

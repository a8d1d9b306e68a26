package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Connection caps' defaults. A listener holds at most MaxConnectionsDefault
// connections, well under the daemon's file descriptor limit even with
// three listeners; one client address holds at most
// MaxConnectionsPerClientDefault of them, so a single client cannot take
// them all.
const (
	MaxConnectionsDefault          = 4096
	MaxConnectionsPerClientDefault = 256
)

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

// Listener configures one HTTP listener: where it listens, whether it
// speaks TLS, and how it bounds its connections. The zero value of each
// optional field means its default.
type Listener struct {
	// Key is the configuration key of Addr, such as "http.addr": it names
	// the listener in errors, logs and the listener label of its metrics.
	// Required by ListenHandler; Listen defaults it to "http.addr".
	Key string
	// Addr is the host:port to listen on; port 0 picks a free port.
	Addr string
	// TLS, when set, serves HTTPS with this configuration (see TLSConfig);
	// nil serves plain HTTP.
	TLS *tls.Config
	// Timeouts bound reads, writes and idle keep-alives; zero fields take
	// DefaultTimeouts. The request header must arrive within the read
	// timeout and at most 5s.
	Timeouts Timeouts
	// MaxConnections caps the listener's open connections. At the cap a new
	// connection takes the place of the one idle the longest (a keep-alive
	// between requests, or one that has not sent a whole request yet); when
	// none is idle, the new one is closed at once. Default
	// MaxConnectionsDefault.
	MaxConnections int
	// MaxConnectionsPerClient caps the open connections of one client
	// address (an IPv6 client's /64, which one host usually holds whole);
	// beyond it new ones are closed at once. Behind a proxy every client has
	// the proxy's address. Default MaxConnectionsPerClientDefault.
	MaxConnectionsPerClient int
	// Registerer receives the connection metrics (metrics.go). Default: none.
	Registerer prometheus.Registerer
	// Logger receives serving errors. Required.
	Logger *slog.Logger
}

// withDefaults fills the zero fields and checks the others; errors name
// the field.
func (l Listener) withDefaults() (Listener, error) {
	switch {
	case l.Key == "":
		return l, errors.New("server: Listener.Key is required")
	case l.Logger == nil:
		return l, fmt.Errorf("server: %s: Listener.Logger is required", l.Key)
	case l.MaxConnections < 0:
		return l, fmt.Errorf("server: %s: negative MaxConnections %d", l.Key, l.MaxConnections)
	case l.MaxConnectionsPerClient < 0:
		return l, fmt.Errorf("server: %s: negative MaxConnectionsPerClient %d", l.Key, l.MaxConnectionsPerClient)
	case l.TLS != nil && len(l.TLS.Certificates) == 0 && l.TLS.GetCertificate == nil && l.TLS.GetConfigForClient == nil:
		return l, fmt.Errorf("server: %s: the TLS configuration has no certificate", l.Key)
	}
	if l.MaxConnections == 0 {
		l.MaxConnections = MaxConnectionsDefault
	}
	if l.MaxConnectionsPerClient == 0 {
		l.MaxConnectionsPerClient = MaxConnectionsPerClientDefault
	}
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	l.Timeouts = Timeouts{
		Read:  or(l.Timeouts.Read, DefaultTimeouts.Read),
		Write: or(l.Timeouts.Write, DefaultTimeouts.Write),
		Idle:  or(l.Timeouts.Idle, DefaultTimeouts.Idle),
	}
	return l, nil
}

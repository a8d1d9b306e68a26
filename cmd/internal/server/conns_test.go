package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// counts returns the open connections, the client entries and the idle
// list's length: all three back to 0 means closed connections are
// forgotten.
func (l *capListener) counts() (open, clients, idle int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, len(l.client), l.idle.Len()
}

// capped is a listener under test, its registry and its cap listener.
type capped struct {
	*Server
	reg   *prometheus.Registry
	conns *capListener
}

// serveCapped serves h (204 when nil) on a listener with l's caps, keyed
// "http.addr", until the test ends.
func serveCapped(t *testing.T, l Listener, h http.Handler) capped {
	t.Helper()
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	}
	reg := prometheus.NewRegistry()
	l.Key, l.Addr, l.Logger, l.Registerer = "http.addr", "127.0.0.1:0", quiet, reg
	s, err := ListenHandler(l, h)
	if err != nil {
		t.Fatal(err)
	}
	runServer(t, s)
	return capped{Server: s, reg: reg, conns: s.ln.(*capListener)}
}

// waitOpen waits until the listener holds n connections.
func (c capped) waitOpen(t *testing.T, n int) {
	t.Helper()
	testkit.EventuallyState(t, 5*time.Second, func() (bool, string) {
		open, _, _ := c.conns.counts()
		return open == n, fmt.Sprintf("open connections: %d, want %d", open, n)
	})
}

func (c capped) refused(t *testing.T, reason string) float64 {
	t.Helper()
	return testkit.Metric(t, c.reg, "courier_http_connections_refused_total", "listener", "http.addr", "reason", reason)
}

// dialFrom opens a connection from source (a loopback address) to addr,
// closed when the test ends, before the server stops.
func dialFrom(t *testing.T, source, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reports whether the server closed c: a read ends in EOF
// or a reset within wait, rather than timing out.
func closedByServer(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// refusedAtOnce connects from source and reports whether the server
// closed the connection unserved: with a reset, which on loopback may come
// before the dial has returned.
func refusedAtOnce(t *testing.T, source, addr string) bool {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return closedByServer(c, 5*time.Second)
}

// roundTrip sends a GET on c and returns the status code.
func roundTrip(t *testing.T, c net.Conn) int {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestPerClientCap: one address may hold MaxConnectionsPerClient
// connections; one more is closed at once, and another address is served.
func TestPerClientCap(t *testing.T) {
	t.Parallel()
	s := serveCapped(t, Listener{MaxConnectionsPerClient: 3}, nil)
	held := make([]net.Conn, 3)
	for i := range held {
		held[i] = dialFrom(t, "127.0.0.1", s.Addr())
	}
	s.waitOpen(t, 3)
	if !refusedAtOnce(t, "127.0.0.1", s.Addr()) {
		t.Error("a connection over the per-client cap was not closed")
	}
	if code := roundTrip(t, dialFrom(t, "127.0.0.2", s.Addr())); code != http.StatusNoContent {
		t.Errorf("another client: %d", code)
	}
	if code := roundTrip(t, held[0]); code != http.StatusNoContent {
		t.Errorf("a connection within the cap: %d", code)
	}
	if got := s.refused(t, reasonPerClient); got != 1 {
		t.Errorf("refused per_client: %v, want 1", got)
	}
	s.waitOpen(t, 4)
	if got := testkit.Metric(t, s.reg, "courier_http_connections", "listener", "http.addr"); got != 4 {
		t.Errorf("courier_http_connections: %v, want 4", got)
	}
}

// TestTotalCapEvictsTheIdlest: at MaxConnections a new connection takes
// the place of the one idle the longest and is served; when every
// connection is busy, the new one is closed at once.
func TestTotalCapEvictsTheIdlest(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	s := serveCapped(t, Listener{MaxConnections: 3}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			<-release
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	oldest := dialFrom(t, "127.0.0.1", s.Addr())
	s.waitOpen(t, 1) // accepted first, so idle the longest
	keepAlive := dialFrom(t, "127.0.0.1", s.Addr())
	silent := dialFrom(t, "127.0.0.1", s.Addr())
	s.waitOpen(t, 3)
	// A keep-alive that has just served a request is idle the shortest.
	if code := roundTrip(t, keepAlive); code != http.StatusNoContent {
		t.Fatalf("keep-alive: %d", code)
	}

	good := dialFrom(t, "127.0.0.2", s.Addr())
	if code := roundTrip(t, good); code != http.StatusNoContent {
		t.Errorf("a good request at the cap: %d", code)
	}
	if !closedByServer(oldest, 5*time.Second) {
		t.Error("the connection idle the longest was not evicted")
	}
	for name, c := range map[string]net.Conn{"silent": silent, "keep-alive": keepAlive} {
		if closedByServer(c, 50*time.Millisecond) {
			t.Errorf("the %s connection was closed; only the idlest should be", name)
		}
	}
	if got := s.refused(t, reasonEvicted); got != 1 {
		t.Errorf("refused evicted: %v, want 1", got)
	}

	// Every connection busy: no room is made.
	for _, c := range []net.Conn{keepAlive, silent, good} {
		if _, err := io.WriteString(c, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		<-entered
	}
	if !refusedAtOnce(t, "127.0.0.3", s.Addr()) {
		t.Error("a connection over a cap of busy connections was not closed")
	}
	close(release)
	if got := s.refused(t, reasonOverCapacity); got != 1 {
		t.Errorf("refused over_capacity: %v, want 1", got)
	}
}

// TestConnectionsAreForgotten: many connections opened and closed, by
// either side, served or refused, leave nothing behind.
func TestConnectionsAreForgotten(t *testing.T) {
	t.Parallel()
	s := serveCapped(t, Listener{MaxConnections: 20, MaxConnectionsPerClient: 10}, nil)
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%4))}}
			c, err := d.DialContext(t.Context(), "tcp", s.Addr())
			if err != nil {
				return // a full accept queue may refuse some: the rest is the test
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			switch i % 3 {
			case 0: // a request, and the server closes
				_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
				_, _ = io.Copy(io.Discard, c)
			case 1: // a keep-alive request, and the client closes
				_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				_, _ = c.Read(make([]byte, 512))
			case 2: // half a request
				_, _ = io.WriteString(c, "GET / HT")
			}
		})
	}
	wg.Wait()
	testkit.EventuallyState(t, 10*time.Second, func() (bool, string) {
		open, clients, idle := s.conns.counts()
		return open == 0 && clients == 0 && idle == 0, fmt.Sprintf("open %d, clients %d, idle %d", open, clients, idle)
	})
	if got := testkit.Metric(t, s.reg, "courier_http_connections", "listener", "http.addr"); got != 0 {
		t.Errorf("courier_http_connections: %v after every connection closed", got)
	}
}

// TestSlowHeaderIsCut: a client that sends part of a header and waits
// (slowloris) is cut at the header timeout.
func TestSlowHeaderIsCut(t *testing.T) {
	t.Parallel()
	s := serveCapped(t, Listener{Timeouts: Timeouts{Read: 300 * time.Millisecond}}, nil)
	c := dialFrom(t, "127.0.0.1", s.Addr())
	start := time.Now()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	if !closedByServer(c, 10*time.Second) {
		t.Fatal("a partial header held the connection open")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("a partial header held the connection for %s; the header timeout is 300ms", elapsed)
	}
	s.waitOpen(t, 0)
}

// TestClientOf: IPv4 clients count by address, IPv6 clients by /64.
func TestClientOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{"192.0.2.7", "192.0.2.7/32"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
	}
	for _, tt := range tests {
		if got := ClientOf(netip.MustParseAddr(tt.addr)); got.String() != tt.want {
			t.Errorf("ClientOf(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
	if got := ClientOf(netip.Addr{}); got.IsValid() {
		t.Errorf("ClientOf(zero) = %s", got)
	}
}

// TestMetricsShareARegistry: listeners of different keys register side by
// side, and one bound again under the same key adds to its series.
func TestMetricsShareARegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	for _, key := range []string{"http.addr", "admin.addr", "http.addr"} {
		s, err := ListenHandler(Listener{Key: key, Addr: "127.0.0.1:0", Logger: quiet, Registerer: reg}, http.NotFoundHandler())
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		s.ln.Close()
	}
	series := testkit.Series(t, reg)
	for _, want := range []string{
		`courier_http_connections{listener="admin.addr"}`,
		`courier_http_connections_refused_total{listener="http.addr",reason="evicted"}`,
		`courier_http_connections_refused_total{listener="admin.addr",reason="over_capacity"}`,
	} {
		if v, ok := series[want]; !ok || v != 0 {
			t.Errorf("%s: %v, %v; want 0", want, v, ok)
		}
	}
}

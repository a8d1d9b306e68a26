package testkit

import (
	"context"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/tcpproxy"
)

// StartProxy puts a TCP proxy between a client and target (see package
// tcpproxy), so a test can cut a client off from Redis without touching the
// server: Stall holds every byte (as behind a partition: calls hang),
// Resume lets them through, Drop resets the connections. Clients connect to
// its Addr. It is closed when the test ends.
func StartProxy(t testing.TB, target string) *tcpproxy.Proxy {
	t.Helper()
	p, err := tcpproxy.Start(context.WithoutCancel(t.Context()), target)
	if err != nil {
		t.Fatalf("testkit: start a proxy to %s: %v", target, err)
	}
	t.Cleanup(p.Close)
	return p
}

// StartProxyClient starts a proxy to target (see StartProxy) and returns it
// with a client that reaches target through it, without client-side
// caching. The client is closed when the test ends, before the proxy.
func StartProxyClient(t testing.TB, target string) (*tcpproxy.Proxy, rueidis.Client) {
	t.Helper()
	p := StartProxy(t, target)
	return p, connect(t, rueidis.ClientOption{InitAddress: []string{p.Addr}, DisableCache: true})
}

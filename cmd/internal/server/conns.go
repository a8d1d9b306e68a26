package server

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"sync"
)

// capListener caps a listener's open connections, in total and per client
// address. It sits under TLS and under http.Server, and learns from
// http.Server's ConnState hook which connections are idle.
//
// Nothing here reads from or writes to a client: admitting or refusing a
// connection is bookkeeping and a close, so a slow client never holds up
// the accept loop. Every connection is forgotten the first time it is
// closed, by whoever closes it (http.Server, an eviction, a hijacker).
type capListener struct {
	net.Listener
	max, perClient int
	metrics        *connMetrics

	mu     sync.Mutex
	open   int
	client map[netip.Prefix]int // open connections per client; no zero entries
	// idle holds the evictable connections, idle the longest first: those
	// between two requests, and those that have not sent a whole request
	// yet (a slow client's header is no better than silence).
	idle list.List
}

func newCapListener(ln net.Listener, l Listener, m *connMetrics) *capListener {
	return &capListener{
		Listener:  ln,
		max:       l.MaxConnections,
		perClient: l.MaxConnectionsPerClient,
		metrics:   m,
		client:    make(map[netip.Prefix]int),
	}
}

var (
	_ net.Listener = (*capListener)(nil)
	_ net.Conn     = (*trackedConn)(nil)
)

// trackedConn is an admitted connection.
type trackedConn struct {
	net.Conn
	l      *capListener
	client netip.Prefix
	// Guarded by l.mu.
	idleAt   *list.Element // its place in l.idle; nil while it is busy
	released bool
}

// Accept returns the next connection the caps admit; the others are closed
// here and counted, and Accept waits for the next.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := l.admit(c); tc != nil {
			return tc, nil
		}
	}
}

// admit tracks c, or closes it and returns nil. At the cap it evicts the
// connection idle the longest.
func (l *capListener) admit(c net.Conn) *trackedConn {
	addr := remoteAddr(c)
	client := ClientOf(addr)
	l.mu.Lock()
	if l.client[client] >= l.perClient {
		l.mu.Unlock()
		l.drop(c, reasonPerClient)
		return nil
	}
	var victim *trackedConn
	if l.open >= l.max {
		oldest := l.idle.Front()
		if oldest == nil {
			l.mu.Unlock()
			l.drop(c, reasonOverCapacity)
			return nil
		}
		victim = oldest.Value.(*trackedConn)
		l.releaseLocked(victim)
	}
	tc := &trackedConn{Conn: c, l: l, client: client}
	tc.idleAt = l.idle.PushBack(tc) // silent so far
	l.open++
	l.client[client]++
	l.metrics.open.Inc()
	l.mu.Unlock()
	if victim != nil {
		l.drop(victim.Conn, reasonEvicted) // its server goroutine sees the close and ends
	}
	return tc
}

// drop closes c with a reset rather than a FIN: a client that reconnects as
// fast as it is refused, or evicted, would otherwise leave this side a
// socket in TIME_WAIT for each attempt.
func (l *capListener) drop(c net.Conn, reason string) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
	l.metrics.refused[reason].Inc()
}

// releaseLocked forgets tc, once; l.mu is held.
func (l *capListener) releaseLocked(tc *trackedConn) {
	if tc.released {
		return
	}
	tc.released = true
	if tc.idleAt != nil {
		l.idle.Remove(tc.idleAt)
		tc.idleAt = nil
	}
	l.open--
	if l.client[tc.client]--; l.client[tc.client] == 0 {
		delete(l.client, tc.client)
	}
	l.metrics.open.Dec()
}

// connState is http.Server's ConnState hook: it moves a connection in and
// out of the idle list as it serves requests.
func (l *capListener) connState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if tc.released {
		return
	}
	switch state {
	case http.StateActive, http.StateHijacked:
		if tc.idleAt != nil {
			l.idle.Remove(tc.idleAt)
			tc.idleAt = nil
		}
	case http.StateIdle:
		if tc.idleAt != nil {
			l.idle.MoveToBack(tc.idleAt)
		} else {
			tc.idleAt = l.idle.PushBack(tc)
		}
	case http.StateClosed:
		l.releaseLocked(tc)
	case http.StateNew: // admit listed it as idle already
	}
}

// Close forgets the connection, then closes it.
func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// remoteAddr is c's peer address; the zero Addr when it is not TCP.
func remoteAddr(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// ClientOf is the unit a per-client limit counts (this package's
// connection cap, and the API's failed-authentication limit): an IPv4
// address, or an IPv6 /64, since one host is commonly given a whole /64 and could
// otherwise open its connections from as many addresses as it likes.
func ClientOf(a netip.Addr) netip.Prefix {
	bits := a.BitLen()
	if a.Is6() {
		bits = 64
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return netip.Prefix{} // not an IP address: all such share one count
	}
	return p
}

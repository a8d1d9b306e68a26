// Package tcpproxy is a TCP proxy that can fail the network between a
// client and a server without touching either: it stalls (a partition that
// keeps the connections open), resumes, and drops connections. The chaos
// suite puts one between each daemon and Redis; tests use it through
// internal/testkit.StartProxy.
package tcpproxy

import (
	"context"
	"net"
	"sync"
)

// Proxy forwards TCP connections from its own loopback address to a
// target server, so that the network between a client and the server can
// fail without touching either: Stall holds every byte (a partition
// that keeps the connections open), Resume lets the held bytes through,
// Drop resets every connection (a network blip).
type Proxy struct {
	Addr string // where clients connect

	target string
	ln     net.Listener
	ctx    context.Context // ends dialing to the target when it ends

	mu     sync.Mutex
	gate   chan struct{} // closed while bytes flow; open while stalled
	conns  map[net.Conn]struct{}
	closed bool
}

// Start listens on a free loopback port and forwards to target until
// Close; ctx bounds its dials to the target.
func Start(ctx context.Context, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, ctx: ctx, gate: open, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

func (p *Proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.connect(client)
	}
}

// connect dials the target for client and pumps both ways.
func (p *Proxy) connect(client net.Conn) {
	p.waitGate() // a stalled network does not connect either
	var d net.Dialer
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	if !p.add(client, server) {
		return
	}
	go p.pump(client, server)
	go p.pump(server, client)
}

// add tracks a pair of connections; false (and both closed) once the proxy
// is closed.
func (p *Proxy) add(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = a.Close()
		_ = b.Close()
		return false
	}
	p.conns[a], p.conns[b] = struct{}{}, struct{}{}
	return true
}

// pump copies src to dst, holding each chunk at the gate. When either side
// ends, both do.
func (p *Proxy) pump(src, dst net.Conn) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, src)
		delete(p.conns, dst)
		p.mu.Unlock()
		_ = src.Close()
		_ = dst.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.waitGate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) waitGate() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	<-g
}

// Stall holds every byte in either direction until Resume.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default: // already stalled
	}
}

// Resume lets the held bytes through and forwards again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

// Drop closes every connection through the proxy; clients see them reset
// and reconnect.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeConns()
}

// Close stops the proxy and closes its connections. closed is set under
// the same lock that closes them, so a connection accepted meanwhile is
// closed by add.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.Resume()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.closeConns()
}

// closeConns closes every tracked connection; p.mu must be held.
func (p *Proxy) closeConns() {
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

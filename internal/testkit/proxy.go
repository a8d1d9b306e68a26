package testkit

import (
	"context"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from its own loopback address to a target,
// so a test can cut a client off from Redis without touching the server:
// Stall stops forwarding (the connections stay open and silent, as behind a
// partition), Resume lets the bytes through again, Drop closes every
// connection. It is closed when the test ends.
type Proxy struct {
	Addr string // where clients connect

	target string
	ln     net.Listener

	mu      sync.Mutex
	stalled bool
	resume  chan struct{} // closed by Resume; replaced by Stall
	conns   map[net.Conn]bool
}

// StartProxy listens on a free loopback port and forwards to target.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: proxy listen: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln,
		resume: make(chan struct{}), conns: make(map[net.Conn]bool)}
	close(p.resume)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

func (p *Proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		var d net.Dialer
		out, err := d.DialContext(context.Background(), "tcp", p.target) //nolint:forbidigo // the proxy outlives any one request

		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			return
		}
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// track registers a connection pair; false when the proxy is closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

// pipe copies from src to dst, holding each chunk while the proxy is stalled.
func (p *Proxy) pipe(src, dst net.Conn) {
	defer p.forget(src, dst)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			wait := p.resume
			p.mu.Unlock()
			<-wait
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed connection: close both ends
		}
	}
}

// forget closes a connection pair and stops tracking it.
func (p *Proxy) forget(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// Stall stops forwarding: bytes sent either way are held until Resume, and
// new connections are accepted but stay silent too.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stalled {
		p.stalled = true
		p.resume = make(chan struct{})
	}
}

// Resume forwards again, held bytes first.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled {
		p.stalled = false
		close(p.resume)
	}
}

// Drop closes every connection through the proxy (clients see a reset).
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.Resume()
	p.Drop()
	p.mu.Lock()
	p.conns = nil
	p.mu.Unlock()
}

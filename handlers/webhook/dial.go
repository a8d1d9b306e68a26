package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Transport limits, as net/http's DefaultTransport has them, except for
// idleConnsPerHost.
const (
	dialTimeout         = 30 * time.Second
	dialKeepAlive       = 30 * time.Second
	idleConnsMax        = 100
	idleConnTimeout     = 90 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	// idleConnsPerHost keeps enough idle connections for a queue's
	// concurrent jobs to reuse them; net/http's default of 2 would make
	// most of them dial.
	idleConnsPerHost = 32
	// dialShareMin is the least time one address of several gets when the
	// request's deadline is shared among them, as net.Dialer does.
	dialShareMin = 2 * time.Second
)

// lookupFunc resolves host to its addresses, as net.Resolver.LookupNetIP;
// network is "ip", "ip4" or "ip6".
type lookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// dialer connects a webhook's requests under its netPolicy. It resolves
// names itself, so that the address it checks is the address it dials, on
// every connection: a name that answers with a public address first and a
// loopback one later (DNS rebinding) is refused the second time.
type dialer struct {
	policy netPolicy
	lookup lookupFunc // tests replace it
	net    net.Dialer
}

func newDialer(p netPolicy) *dialer {
	d := &dialer{policy: p, lookup: net.DefaultResolver.LookupNetIP}
	d.net = net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive, Control: d.control}
	return d
}

// newClient returns a client of its own, so that no other code's settings
// reach it, that connects through d only and does not follow redirects: a
// redirect could lead a request off the allowed hosts, and would turn the
// POST into a GET. It uses no proxy, even one the environment names: a
// proxy would resolve and connect beyond the address rule.
func newClient(d *dialer) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         d.dialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        idleConnsMax,
		MaxIdleConnsPerHost: idleConnsPerHost,
		IdleConnTimeout:     idleConnTimeout,
		TLSHandshakeTimeout: tlsHandshakeTimeout,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// dialContext resolves address's host, drops the addresses the policy
// refuses, and dials the others in turn. When every address is refused it
// returns the first refusal, a *refusedError.
func (d *dialer) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := d.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	var allowed []netip.Addr
	var refused error
	for _, a := range addrs {
		a = a.Unmap()
		if err := d.policy.check(a); err != nil {
			if refused == nil {
				refused = err
			}
			continue
		}
		allowed = append(allowed, a)
	}
	if len(allowed) == 0 {
		if refused != nil {
			return nil, refused
		}
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	var errs []error
	for i, a := range allowed {
		conn, err := d.dialOne(ctx, network, net.JoinHostPort(a.String(), port), len(allowed)-i)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// dialOne dials one address, with a share of ctx's time when left
// addresses remain to try, so that one address that does not answer
// leaves time for the next.
func (d *dialer) dialOne(ctx context.Context, network, address string, left int) (net.Conn, error) {
	if deadline, ok := ctx.Deadline(); ok && left > 1 {
		remaining := time.Until(deadline)
		share := max(remaining/time.Duration(left), min(remaining, dialShareMin))
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, share)
		defer cancel()
	}
	return d.net.DialContext(ctx, network, address)
}

// resolve returns host's addresses: host itself when it is an IP address.
func (d *dialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	return d.lookup(ctx, ipNet, host)
}

// control checks the address a socket is about to connect to, whatever
// chose it: a second guard behind dialContext's check, should a change
// ever let a connection bypass it.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("cannot check the address %q before connecting: %w", address, err)
	}
	return d.policy.check(ap.Addr())
}

package api

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// A web page the operator visits can make the browser send requests to
// the API. With tokens it gets nowhere: a page cannot make the browser add
// an Authorization header to a cross-site request without a CORS
// preflight, which the API never grants. Without authentication
// (InsecureNoAuth) two attacks remain, and browserGuard refuses both:
//
//   - Cross-site request forgery: a form or a text/plain fetch from
//     another site POSTs to 127.0.0.1. Refused with net/http's
//     CrossOriginProtection, which reads Sec-Fetch-Site and Origin.
//     Clients that are not browsers send neither and are let through.
//     It runs with tokens too: there it refuses nothing a client could
//     have sent (no CORS), and it keeps the API safe should a way to
//     authenticate that browsers send by themselves ever be added.
//   - DNS rebinding: the attacker's name is made to resolve to 127.0.0.1,
//     and the page, same-origin with that name, reads job payloads. The
//     browser sends the attacker's name as Host, so only Hosts that no
//     page can rebind are served: IP literals, localhost and its
//     subdomains (which browsers resolve to loopback themselves), and
//     the names in Options.AllowedHosts. This runs without
//     authentication only: with tokens, a rebound page has no token to
//     read anything with, and operators reach the API through names of
//     their own (load balancers, service discovery) that the API cannot
//     know.
type browserGuard struct {
	origin *http.CrossOriginProtection
	// checkHost is set without authentication; hosts are the names
	// allowed besides IP literals and localhost, in lower case.
	checkHost bool
	hosts     []string
}

func newBrowserGuard(insecure bool, allowed []string) (*browserGuard, error) {
	g := &browserGuard{origin: http.NewCrossOriginProtection(), checkHost: insecure}
	for _, host := range allowed {
		name := normalHost(host)
		if name == "" || strings.ContainsAny(name, ":/ []") {
			return nil, fmt.Errorf("api: AllowedHosts entry %q: want a host name without scheme or port, such as courier.internal", host)
		}
		g.hosts = append(g.hosts, name)
	}
	return g, nil
}

// refuse returns the refusal of r, or nil when r may go on.
//
// A foreign Host gets 403 forbidden rather than 421 Misdirected Request:
// each error code has one status, and a client may retry a 421 on another
// connection, which would only be refused again.
func (g *browserGuard) refuse(r *http.Request) *Error {
	if g.checkHost && !g.hostAllowed(r.Host) {
		name := hostName(r.Host)
		return apiError(wire.CodeForbidden, "Host", fmt.Sprintf(
			"Host %q is not served: without authentication the API answers only requests addressed to an IP address, "+
				"localhost or an allowed host, since any other name may be a web page's DNS rebinding; "+
				"to serve it, add %q to the API's allowed hosts (admin.allowed_hosts)", r.Host, normalHost(name)))
	}
	if err := g.origin.Check(r); err != nil {
		return apiError(wire.CodeForbidden, "", fmt.Sprintf(
			"cross-origin request refused (%v): a web page of another site may not make a browser %s here; "+
				"send it from a client that is not a browser, or from the API's own origin", err, r.Method))
	}
	return nil
}

// hostAllowed reports whether the Host header host may be served without
// authentication.
func (g *browserGuard) hostAllowed(host string) bool {
	if host == "" {
		// Only HTTP/1.0 goes without a Host, and no browser speaks it.
		return true
	}
	name := hostName(host)
	if _, err := netip.ParseAddr(name); err == nil {
		// A rebinding attack needs a DNS name: an IP literal is whatever
		// the operator typed.
		return true
	}
	name = normalHost(name)
	return name == "localhost" || strings.HasSuffix(name, ".localhost") || slices.Contains(g.hosts, name)
}

// hostName is a Host header without its port and, for IPv6, its brackets.
func hostName(host string) string {
	if name, _, err := net.SplitHostPort(host); err == nil {
		return name
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// normalHost is a host name as compared: lower case, without the final
// dot of a fully qualified name.
func normalHost(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, "."))
}

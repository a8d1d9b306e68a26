package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
)

// addrRange is one row of refusedRanges.
type addrRange struct {
	prefix netip.Prefix
	// kind names the range for a message, as in "a loopback address".
	kind string
	// embeds is set for IPv6 forms that carry an IPv4 address: such an
	// address is refused when the IPv4 address it carries is, since a
	// translator or tunnel may deliver it there.
	embeds func(netip.Addr) netip.Addr
}

// refusedRanges are the addresses a webhook never connects to unless
// Settings.AllowNetworks lists them: this host, the local networks, and
// what is not a unicast address on the Internet. A job that names a host
// must not reach the daemon's own Redis, admin API or cloud metadata
// service through it. The first row that holds an address decides, so a
// narrow range sits before a wider one. IPv4-mapped IPv6 addresses are
// unmapped before the lookup, so that ::ffff:127.0.0.1 is loopback too.
var refusedRanges = []addrRange{
	{prefix: netip.MustParsePrefix("0.0.0.0/32"), kind: "an unspecified address"},
	{prefix: netip.MustParsePrefix("0.0.0.0/8"), kind: `a "this network" address`},
	{prefix: netip.MustParsePrefix("10.0.0.0/8"), kind: "a private address"},
	{prefix: netip.MustParsePrefix("100.64.0.0/10"), kind: "a shared (carrier-grade NAT) address"},
	{prefix: netip.MustParsePrefix("127.0.0.0/8"), kind: "a loopback address"},
	{prefix: netip.MustParsePrefix("169.254.0.0/16"), kind: "a link-local address"},
	{prefix: netip.MustParsePrefix("172.16.0.0/12"), kind: "a private address"},
	{prefix: netip.MustParsePrefix("192.0.0.0/24"), kind: "an IETF protocol assignment address"},
	{prefix: netip.MustParsePrefix("192.168.0.0/16"), kind: "a private address"},
	{prefix: netip.MustParsePrefix("198.18.0.0/15"), kind: "a benchmarking address"},
	{prefix: netip.MustParsePrefix("224.0.0.0/4"), kind: "a multicast address"},
	{prefix: netip.MustParsePrefix("255.255.255.255/32"), kind: "the broadcast address"},
	{prefix: netip.MustParsePrefix("240.0.0.0/4"), kind: "a reserved address"},

	{prefix: netip.MustParsePrefix("::/128"), kind: "an unspecified address"},
	{prefix: netip.MustParsePrefix("::1/128"), kind: "a loopback address"},
	{prefix: netip.MustParsePrefix("::/96"), kind: "an IPv4-compatible address", embeds: low32},
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), kind: "a NAT64 address", embeds: low32},
	// The local-use NAT64 prefix (RFC 8215) is refused whole: unlike the
	// well-known one above, whose translators must not reach non-global
	// IPv4 addresses (RFC 6052, section 3.1), it exists to reach private
	// networks, and where it carries the IPv4 address depends on the
	// length of the prefix each site carves from it.
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), kind: "a local-use NAT64 address"},
	{prefix: netip.MustParsePrefix("2002::/16"), kind: "a 6to4 address", embeds: sixToFour},
	{prefix: netip.MustParsePrefix("fc00::/7"), kind: "a unique-local address"},
	{prefix: netip.MustParsePrefix("fe80::/10"), kind: "a link-local address"},
	{prefix: netip.MustParsePrefix("fec0::/10"), kind: "a site-local address"},
	{prefix: netip.MustParsePrefix("ff00::/8"), kind: "a multicast address"},
}

// low32 returns the IPv4 address in the last 32 bits of a, as NAT64 (RFC
// 6052, /96) and IPv4-compatible addresses carry it.
func low32(a netip.Addr) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte(b[12:16]))
}

// sixToFour returns the IPv4 address a 6to4 address (RFC 3056) carries, in
// bits 16 to 47.
func sixToFour(a netip.Addr) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte(b[2:6]))
}

// classify returns the kind of a refused address, as in "a loopback
// address", or "" for an address a webhook may reach.
func classify(a netip.Addr) string {
	a = a.WithZone("").Unmap()
	for _, r := range refusedRanges {
		if !r.prefix.Contains(a) {
			continue
		}
		if r.embeds == nil {
			return r.kind
		}
		v4 := r.embeds(a)
		if kind := classify(v4); kind != "" {
			return fmt.Sprintf("%s of %s, %s", r.kind, v4, kind)
		}
		return ""
	}
	return ""
}

// netPolicy decides which addresses a webhook may connect to.
type netPolicy struct {
	allow []netip.Prefix // Settings.AllowNetworks, parsed
}

// refusedError is the error of a connection not made because its address
// is refused (see Settings.AllowNetworks): the job fails permanently, since
// sending it again would reach the same address.
type refusedError struct {
	addr netip.Addr // unmapped and without a zone
	kind string     // as in "a loopback address"
}

// Error implements error.
func (e *refusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s; list its network in allow_networks to allow it", e.addr, e.kind)
}

// check returns a *refusedError for an address the policy refuses, or nil.
// An address in a listed network is allowed whatever its kind.
func (p netPolicy) check(a netip.Addr) error {
	a = a.WithZone("").Unmap()
	for _, n := range p.allow {
		if n.Contains(a) {
			return nil
		}
	}
	if kind := classify(a); kind != "" {
		return &refusedError{addr: a, kind: kind}
	}
	return nil
}

// checkLiteral refuses a URL whose host is an IP address the policy
// refuses, since no request to it could ever be sent. A host name is
// checked when it resolves, on each connection.
func (p netPolicy) checkLiteral(u *url.URL) error {
	a, err := netip.ParseAddr(u.Hostname())
	var r *refusedError
	if err == nil && errors.As(p.check(a), &r) {
		return fmt.Errorf("%s is %s; list its network in allow_networks to allow it", r.addr, r.kind)
	}
	return nil
}

// parseNetwork parses an entry of Settings.AllowNetworks: a CIDR prefix, as
// in "10.0.0.0/8", or an address, meaning a /32 or /128.
func parseNetwork(entry string) (netip.Prefix, error) {
	if entry == "" {
		return netip.Prefix{}, errors.New("is empty")
	}
	if a, err := netip.ParseAddr(entry); err == nil {
		if a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q has a zone; name the address without it", entry)
		}
		entry = a.String() + "/" + fmt.Sprint(a.BitLen())
	}
	p, err := netip.ParsePrefix(entry)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a network; want a CIDR prefix, as in \"10.0.0.0/8\", or an IP address", entry)
	}
	if p.Addr().Is4In6() {
		// Addresses are unmapped before they are compared, so that this
		// prefix would never match.
		return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped IPv6 prefix; write the IPv4 network instead", entry)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, fmt.Errorf("%q has bits set past its prefix length; did you mean %s?", entry, m)
	}
	return p, nil
}

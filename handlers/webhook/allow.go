package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// hostPattern is one entry of Settings.AllowHosts.
type hostPattern struct {
	// host is a lower-case DNS name without a trailing dot or a canonical
	// IP address; for a wildcard, the suffix a host must end with, leading
	// dot included (".example.com").
	host     string
	wildcard bool
	port     string // decimal; "" means the URL scheme's default port
}

// parseHostPattern parses "host", "host:port", "[ipv6]:port" or
// "*.example.com[:port]".
func parseHostPattern(entry string) (hostPattern, error) {
	e := strings.ToLower(entry)
	switch {
	case e == "":
		return hostPattern{}, errors.New("is empty")
	case strings.Contains(e, "/"):
		return hostPattern{}, fmt.Errorf("%q is not a host; name a host, as in \"example.com\" or \"example.com:8443\"", entry)
	}
	var p hostPattern
	host := e
	if h, port, err := net.SplitHostPort(e); err == nil {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return hostPattern{}, fmt.Errorf("%q has an invalid port", entry)
		}
		host, p.port = h, strconv.FormatUint(n, 10)
	} else if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		host = e[1 : len(e)-1]
	}

	if rest, ok := strings.CutPrefix(host, "*."); ok {
		if !isDNSName(rest) {
			return hostPattern{}, fmt.Errorf("%q is not a valid wildcard, as in \"*.example.com\"", entry)
		}
		p.host, p.wildcard = "."+strings.TrimSuffix(rest, "."), true
		return p, nil
	}
	if host == "*" {
		return hostPattern{}, errors.New(`"*" would allow every host; list the hosts`)
	}
	if strings.Contains(host, "*") {
		return hostPattern{}, fmt.Errorf("%q: a wildcard may only be the first label, as in \"*.example.com\"", entry)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		p.host = addr.String()
		return p, nil
	}
	if !isDNSName(host) {
		return hostPattern{}, fmt.Errorf("%q is not a valid host name or IP address", entry)
	}
	p.host = strings.TrimSuffix(host, ".")
	return p, nil
}

// isDNSName reports whether s, in lower case, looks like a host name:
// dot-separated labels of letters, digits, '-' and '_', with an optional
// trailing dot.
func isDNSName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
				return false
			}
		}
	}
	return true
}

// match reports whether p allows host (normalised as hostPattern.host is)
// on port, where defaultPort is the port of the URL's scheme. An entry
// without a port allows the default port only: "example.com" should not
// open example.com's admin port to jobs. A wildcard matches names only,
// never an IP address such as 10.0.0.1 for "*.0.0.1".
func (p hostPattern) match(host string, ip bool, port, defaultPort string) bool {
	want := p.port
	if want == "" {
		want = defaultPort
	}
	if port != want {
		return false
	}
	if p.wildcard {
		return !ip && len(host) > len(p.host) && strings.HasSuffix(host, p.host)
	}
	return host == p.host
}

// allowed reports whether u, an http or https URL, names a host and port
// that one of patterns allows. A URL without a port is on its scheme's
// default port.
func allowed(patterns []hostPattern, u *url.URL) bool {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	addr, err := netip.ParseAddr(host)
	ip := err == nil
	if ip {
		host = addr.String()
	}
	defaultPort := "80"
	if u.Scheme == "https" {
		defaultPort = "443"
	}
	port := u.Port()
	if port == "" {
		port = defaultPort
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return false
	}
	port = strconv.FormatUint(n, 10)
	for _, p := range patterns {
		if p.match(host, ip, port, defaultPort) {
			return true
		}
	}
	return false
}

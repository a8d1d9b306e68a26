package webhook

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Defaults of Settings.
const (
	TimeoutDefault          = 10 * time.Second
	ContentTypeDefault      = "application/json"
	SignatureVersionDefault = SignatureV2
)

// Settings configure the handler; zero values take the defaults. The
// configuration layer fills them from queues.<name>.webhook.
type Settings struct {
	// URL is where jobs are POSTed: an absolute http or https URL. Required
	// unless AllowHosts is set, in which case a job may name its own URL.
	// No default.
	URL string `koanf:"url" secret:"true"`
	// Secret is the HMAC-SHA256 key that signs each request (see Sign).
	// Default empty: requests are not signed.
	Secret string `koanf:"secret" secret:"true"`
	// Timeout bounds each request, from connecting to reading the start of
	// the response body. Default 10s.
	Timeout time.Duration `koanf:"timeout"`
	// Headers are extra request headers, such as Authorization. They may
	// not set Content-Type (use ContentType), Host, Content-Length,
	// hop-by-hop headers, or any Courier-* header. Default none.
	Headers map[string]string `koanf:"headers" secret:"true"`
	// ContentType is the Content-Type of each request. Default
	// application/json.
	ContentType string `koanf:"content_type"`
	// AllowHosts lists the hosts a job may name in its own URL, and turns on
	// envelope mode (see the package doc). An entry is "host", "host:port",
	// an IP address, or "*.example.com", which matches every subdomain of
	// example.com but not example.com itself; an entry without a port allows only the
	// scheme's default port (80 for http, 443 for https). Default none:
	// every job goes to URL.
	AllowHosts []string `koanf:"allow_hosts"`
	// AllowNetworks lists the networks a request may connect to although
	// the handler refuses their addresses by default: loopback, private,
	// link-local, unspecified, multicast and other non-public ranges (see
	// the package doc). An entry is a CIDR prefix, as in "10.0.0.0/8", or
	// an IP address, meaning that address alone. The rule applies to the
	// address a host name resolves to, on every connection, for URL and a
	// job's own URL alike. Default none: public addresses only.
	AllowNetworks []string `koanf:"allow_networks"`
	// PathSecret says that URL paths are credentials, as in Slack's
	// https://hooks.slack.com/services/T0/B0/XXXX: errors and logs show
	// every URL as scheme://host/[redacted], and blank each segment of the
	// path of URL (or of a job's own URL) at least 8 bytes long wherever it
	// appears. Default false.
	PathSecret bool `koanf:"path_secret"`
	// SignatureVersion is the Courier-Signature scheme sent: 2 signs the
	// timestamp, queue, job id, attempt and body (see Sign); 1 signs the
	// timestamp and body only, so that a captured request can be replayed
	// under another job id, and is only for receivers not yet able to
	// check v2. Default 2.
	SignatureVersion int `koanf:"signature_version"`
}

// config is Settings checked and parsed, ready for the handler.
type config struct {
	url         *url.URL // nil when jobs must name their own
	secret      []byte   // nil: do not sign
	timeout     time.Duration
	header      http.Header // the extra headers, canonical names
	contentType string
	allow       []hostPattern // empty: send payloads as they are to url
	policy      netPolicy
	pathSecret  bool
	sigVersion  int
	redact      redactor // the secrets never to repeat in an error or a log
}

// parse applies the defaults to s and checks it. It returns one error per
// problem, each starting with the setting's key.
func (s Settings) parse() (config, []error) {
	c := config{timeout: s.Timeout, contentType: s.ContentType, pathSecret: s.PathSecret, sigVersion: s.SignatureVersion}
	var errs []error
	if c.timeout == 0 {
		c.timeout = TimeoutDefault
	}
	if c.contentType == "" {
		c.contentType = ContentTypeDefault
	}
	if c.sigVersion == 0 {
		c.sigVersion = SignatureVersionDefault
	}

	// Networks first: the url check needs them.
	for i, entry := range s.AllowNetworks {
		p, err := parseNetwork(entry)
		if err != nil {
			errs = append(errs, fmt.Errorf("allow_networks[%d]: %w", i, err))
			continue
		}
		c.policy.allow = append(c.policy.allow, p)
	}
	switch {
	case s.URL != "":
		u, err := parseURL(s.URL)
		if err != nil {
			errs = append(errs, fmt.Errorf("url: %w", err))
		} else if err := c.policy.checkLiteral(u); err != nil {
			errs = append(errs, fmt.Errorf("url: %w", err))
		}
		c.url = u
	case len(s.AllowHosts) == 0:
		errs = append(errs, errors.New("url: is required (or set allow_hosts so that jobs name their own URL)"))
	}
	if s.Secret != "" {
		c.secret = []byte(s.Secret)
		c.redact.addKey(s.Secret)
	}
	if c.url != nil {
		if ui := c.url.User; ui != nil {
			// http.Client sends user information as a Basic
			// Authorization header: blank that value and what is in it
			// (the user, who may be an API key, and the password).
			pw, _ := ui.Password()
			c.redact.addSecret("Basic " + base64.StdEncoding.EncodeToString([]byte(ui.Username()+":"+pw)))
		}
		// A query often carries a token (?api_key=...): display never
		// shows it, and neither may a receiver's echo of it.
		for _, values := range c.url.Query() {
			for _, v := range values {
				c.redact.addSecret(v)
			}
		}
		if c.pathSecret {
			c.redact.addPath(c.url)
		}
	}
	if c.timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout: must be positive (got %s)", c.timeout))
	}
	if err := checkMediaType(c.contentType); err != nil {
		errs = append(errs, fmt.Errorf("content_type: %w", err))
	}

	c.header = make(http.Header, len(s.Headers))
	seen := make(map[string]string, len(s.Headers)) // canonical → as written
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		value := s.Headers[name]
		canon := http.CanonicalHeaderKey(name)
		if err := checkHeader(name, value); err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := seen[canon]; dup {
			errs = append(errs, fmt.Errorf("headers.%s: repeats headers.%s", name, first))
			continue
		}
		seen[canon] = name
		c.header.Set(canon, value)
		c.redact.addSecret(value)
	}

	for i, entry := range s.AllowHosts {
		p, err := parseHostPattern(entry)
		if err != nil {
			errs = append(errs, fmt.Errorf("allow_hosts[%d]: %w", i, err))
			continue
		}
		c.allow = append(c.allow, p)
	}
	if c.sigVersion != SignatureV1 && c.sigVersion != SignatureV2 {
		errs = append(errs, fmt.Errorf("signature_version: must be 1 or 2 (got %d)", c.sigVersion))
	}
	return c, errs
}

// parseURL parses a webhook URL: absolute, http or https, with a host. Its
// errors never repeat the URL, which may hold credentials.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("is not a valid URL: %w", withoutURL(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("must be an http or https URL (got scheme %q)", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("has no host")
	}
	return u, nil
}

// checkMediaType checks that v is a media type, as in "text/plain;
// charset=utf-8".
func checkMediaType(v string) error {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return fmt.Errorf("is not a media type: %w", err)
	}
	if typ, sub, _ := strings.Cut(mt, "/"); typ == "" || sub == "" {
		return fmt.Errorf("is not a media type: want type/subtype, as in %q", ContentTypeDefault)
	}
	return nil
}

// checkHeader checks one of Settings.Headers. Its errors never repeat the
// value, which may be a credential.
func checkHeader(name, value string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("headers.%s: is not a valid header name", strconv.Quote(name))
	}
	canon := http.CanonicalHeaderKey(name)
	switch {
	case canon == "Content-Type":
		return fmt.Errorf("headers.%s: is set by content_type", name)
	case strings.HasPrefix(canon, "Courier-"):
		return fmt.Errorf("headers.%s: the Courier- prefix is reserved for the headers the handler sets", name)
	case setByClient(canon):
		return fmt.Errorf("headers.%s: is set by the HTTP client", name)
	}
	if !httpguts.ValidHeaderFieldValue(value) {
		return fmt.Errorf("headers.%s: value holds a control character", name)
	}
	return nil
}

// setByClient reports whether net/http manages the header called canon: the
// host, the message framing, and the hop-by-hop headers of RFC 9110,
// section 7.6.1.
func setByClient(canon string) bool {
	switch canon {
	case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
		"Proxy-Connection", "Te", "Trailer", "Upgrade":
		return true
	}
	return false
}

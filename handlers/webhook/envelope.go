package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strings"
)

// envelope is a job's payload when Settings.AllowHosts is set.
type envelope struct {
	// URL is where to POST Body; empty means the configured URL.
	URL string `json:"url"`
	// Body is what to POST, verbatim; nil when the field is absent.
	Body json.RawMessage `json:"body"`
}

// route returns where to POST a job's payload, and what to send. Its errors
// say why the job can never be sent.
func (c *config) route(payload []byte) (*url.URL, []byte, error) {
	if len(c.allow) == 0 {
		return c.url, payload, nil
	}
	env, err := decodeEnvelope(payload)
	if err != nil {
		return nil, nil, err
	}
	if env.URL == "" {
		if c.url == nil {
			return nil, nil, errors.New(`the envelope has no "url" and the handler has no url configured`)
		}
		return c.url, env.Body, nil
	}
	u, err := parseURL(env.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("envelope url: %w", err)
	}
	if !allowed(c.allow, u) {
		return nil, nil, fmt.Errorf("envelope url: host %q is not in allow_hosts", u.Host)
	}
	if c.downgrades(u) {
		return nil, nil, fmt.Errorf("envelope url: http to %s, which the queue's url reaches over https, is refused: "+
			"the request and its configured headers would go in clear; use https", hostOf(u))
	}
	return u, env.Body, nil
}

// downgrades reports whether a job's URL u sends over plain http to the
// host that the configured URL reaches over https, on any port: the
// request would carry the configured headers (an Authorization, say),
// meant for that host over TLS, in clear.
func (c *config) downgrades(u *url.URL) bool {
	return c.url != nil && c.url.Scheme == "https" && u.Scheme == "http" && hostOf(u) == hostOf(c.url)
}

// hostOf is u's host name in lower case, without a trailing dot; an IP
// address in its canonical form.
func hostOf(u *url.URL) string {
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if addr, err := netip.ParseAddr(h); err == nil {
		return addr.Unmap().String()
	}
	return h
}

// decodeEnvelope decodes payload as exactly one envelope with a body.
func decodeEnvelope(payload []byte) (envelope, error) {
	const want = `a JSON envelope {"url": ..., "body": ...}`
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return envelope{}, fmt.Errorf("payload is not %s: %w", want, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return envelope{}, fmt.Errorf("payload is not %s: data after the envelope", want)
	}
	if env.Body == nil {
		return envelope{}, fmt.Errorf(`payload is not %s: "body" is missing`, want)
	}
	return env, nil
}

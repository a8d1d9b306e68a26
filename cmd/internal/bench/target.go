package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// goodEvery is how often the good client sends its request.
const goodEvery = 2 * time.Millisecond

// target is the running daemon's API that authflood and conns measure.
type target struct {
	host  string      // the URL's host:port, for Host and TLS
	addr  string      // host:port to dial
	tls   *tls.Config // nil for http://
	path  string      // the good request's path: cheap, authenticated, any token
	token string
	// loopback: the API is on an IPv4 loopback address, so each kind of
	// client dials from a source address of its own (127.0.0.1 good,
	// 127.0.0.2 and up the others) and the server tells them apart as it
	// would tell apart hosts.
	loopback bool
}

// parseAPI checks --api: http or https, a host, and a port or the
// scheme's.
func parseAPI(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("--api %q: want http://host:port or https://host:port", raw)
	}
	return u, nil
}

func newTarget(o options) (*target, error) {
	u, err := parseAPI(o.api)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host, dialHost := u.Hostname(), u.Hostname()
	if host == "localhost" {
		dialHost = "127.0.0.1" // not ::1: the source addresses are IPv4
	}
	ip := net.ParseIP(dialHost)
	tg := &target{
		host:     u.Host,
		addr:     net.JoinHostPort(dialHost, port),
		path:     strings.TrimSuffix(u.EscapedPath(), "/") + "/v1/queues/" + queue + "/jobs/nonexistent",
		token:    o.token,
		loopback: ip != nil && ip.To4() != nil && ip.IsLoopback(),
	}
	if u.Scheme == "https" {
		// The system's roots verify the server; SSL_CERT_FILE adds a CA.
		tg.tls = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return tg, nil
}

// The source addresses of the clients, 127.0.0.<source>, when the API is
// on loopback: the good client's, and the first of the others'.
const (
	goodSource  = 1
	otherSource = 2
)

// dial connects, without TLS, from 127.0.0.<source> when the API is on
// loopback; else the system chooses the source address.
func (tg *target) dial(ctx context.Context, source byte) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	network := "tcp"
	if tg.loopback {
		d.LocalAddr, network = &net.TCPAddr{IP: net.IPv4(127, 0, 0, source)}, "tcp4"
	}
	return d.DialContext(ctx, network, tg.addr)
}

// goodClient is the client whose latency is measured: one keep-alive
// connection from 127.0.0.1.
func (tg *target) goodClient() *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return tg.dial(ctx, goodSource)
			},
			TLSClientConfig:     tg.tls,
			MaxIdleConnsPerHost: 1,
		},
	}
}

// goodResult is what the good client saw.
type goodResult struct {
	latencies []time.Duration // sorted; of every response
	errors    int             // requests that failed, or were refused (401, 403, 429)
}

func (r goodResult) figures(prefix string) string {
	var last time.Duration
	if len(r.latencies) > 0 {
		last = r.latencies[len(r.latencies)-1]
	}
	return fmt.Sprintf("%s_p50_ms=%s %s_p99_ms=%s %s_max_ms=%s",
		prefix, ms(percentile(r.latencies, 50)), prefix, ms(percentile(r.latencies, 99)), prefix, ms(last))
}

// measure sends the good request every goodEvery until phase ends. Each
// request runs under ctx, not phase, so the phase's end never cuts one
// short: a slow last request counts like the others.
func (tg *target) measure(ctx, phase context.Context, c *http.Client) goodResult {
	var r goodResult
	tick := time.NewTicker(goodEvery)
	defer tick.Stop()
	for {
		select {
		case <-phase.Done():
			slices.Sort(r.latencies)
			return r
		case <-tick.C:
		}
		start := time.Now()
		status, err := tg.get(ctx, c)
		if err != nil {
			r.errors++
			continue
		}
		r.latencies = append(r.latencies, time.Since(start))
		switch status {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
			r.errors++
		}
	}
}

// get sends the good request and reads the whole reply, so that the
// connection is kept alive.
func (tg *target) get(ctx context.Context, c *http.Client) (int, error) {
	scheme := "http"
	if tg.tls != nil {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+tg.host+tg.path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+tg.token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// connect dials from source like dial, with TLS on top for https://; the
// handshake happens on the first read or write.
func (tg *target) connect(ctx context.Context, source byte) (net.Conn, error) {
	c, err := tg.dial(ctx, source)
	if err != nil || tg.tls == nil {
		return c, err
	}
	return tls.Client(c, tg.tls), nil
}

// check sends the good request once before measuring: the connection is
// then open, and a wrong token or address fails the run at once.
func (tg *target) check(ctx context.Context, c *http.Client) error {
	status, err := tg.get(ctx, c)
	switch {
	case err != nil:
		return fmt.Errorf("the good request: %w", err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("the good request got %d: is --token a producer or admin token of %s?", status, tg.host)
	}
	return nil
}

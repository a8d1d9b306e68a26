package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
)

// defineHealthcheck is courier healthcheck: GET a running daemon's /readyz
// and exit 0 when it answers 200, 1 otherwise, printing one line. The
// container image has no shell and no curl, so its HEALTHCHECK runs this.
func defineHealthcheck(fs *flag.FlagSet, _ string) runFunc {
	file := fs.String("config", "", "YAML configuration file whose http.addr (and http.tls) says where the daemon listens; COURIER_* variables override it")
	rawURL := fs.String("url", "", "probe this URL instead (default: /readyz on http.addr, https when http.tls is set; a wildcard host is probed on loopback)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	asJSON := addJSONFlag(fs)
	return func(ctx context.Context, std streams) error {
		if *timeout <= 0 {
			return &usageError{field: "--timeout", msg: fmt.Sprintf("--timeout must be positive (got %s)", *timeout)}
		}
		target, insecure := *rawURL, false
		if target == "" {
			cfg, err := config.Load(config.Sources{File: *file, Environ: os.Environ()})
			if err != nil {
				return invalidConfig(err)
			}
			if target, err = readyzURL(cfg.HTTP); err != nil {
				return err
			}
			// The daemon's own listener, on loopback: its certificate names
			// the service, rarely 127.0.0.1, and identity is not what this
			// probe checks.
			insecure = cfg.HTTP.TLS.Enabled()
		} else if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &usageError{field: "--url", msg: fmt.Sprintf("--url %q: want http(s)://host:port/path", target)}
		}
		status, reason, err := probe(ctx, target, *timeout, insecure)
		if err != nil {
			return &notReadyError{msg: fmt.Sprintf("not ready: GET %s: %v", target, err)}
		}
		if status != http.StatusOK {
			return &notReadyError{msg: fmt.Sprintf("not ready: GET %s: %d %s", target, status, reason)}
		}
		if *asJSON {
			return writeJSON(std.out, struct {
				Ready  bool   `json:"ready"`
				URL    string `json:"url"`
				Status int    `json:"status"`
			}{true, target, status})
		}
		fmt.Fprintf(std.out, "ready: GET %s: 200\n", target)
		return nil
	}
}

// notReadyError is a failed probe: exit 1, whatever the cause (Docker
// reserves exit code 2 of a HEALTHCHECK, and knows no other).
type notReadyError struct{ msg string }

func (e *notReadyError) Error() string { return e.msg }

// readyzURL is the /readyz URL of the main listener h configures.
func readyzURL(h config.HTTP) (string, error) {
	host, port, err := net.SplitHostPort(h.Addr)
	if err != nil {
		return "", fmt.Errorf("http.addr %q: %w", h.Addr, err)
	}
	if port == "0" {
		return "", &usageError{field: "--url", msg: fmt.Sprintf("http.addr %q has port 0 (any free port): give --url", h.Addr)}
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	scheme := "http"
	if h.TLS.Enabled() {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/readyz", nil
}

// probe GETs target and returns its status and the first line of its
// body (the reason /readyz gives), made printable.
func probe(ctx context.Context, target string, timeout time.Duration, insecure bool) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil}
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // #nosec G402 -- the daemon's own listener on loopback; see defineHealthcheck
	}
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil) // #nosec G704 -- the URL the operator gave (--url) or the daemon's own listener
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req) // #nosec G704 -- see NewRequestWithContext above
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	return resp.StatusCode, printable(line), nil
}

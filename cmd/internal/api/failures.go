package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/cmd/internal/server"
	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// Failed authentications are limited per client address, so that a client
// guessing tokens is slowed down to Options.FailedAuthLimit and, once
// throttled, costs next to nothing: its requests are refused before their
// token is hashed, and each refusal is held back (throttleHold) on its
// connection before it is sent. Held, a flood's connections carry one
// request a second each, and the listener's per-client cap bounds how
// many it may hold. (Over HTTP/2, which a TLS listener speaks, each stream
// is held on its own: a connection carries up to net/http's limit of
// concurrent streams, 250, a second; so at most maxHeld requests are held
// at once, and those beyond are refused at once.) Refused at once, or with its
// connection closed, the flooder would send the next request, or open the
// next connection, at once, and the refusals alone would keep the CPU busy
// (measured with courier bench --mode authflood: a good token's p99 rose
// 18-fold that way). Only a presented credential that is wrong spends a
// failure: a request without an Authorization header is one any web page
// can make a browser send (an <img> pointing at the API), and counting it
// would let that page lock the browser's address, and everyone behind the
// same NAT or proxy, out of the API and the UI's login.

// The values of courier_api_auth_failures_total's reason label.
const (
	failMissing   = "missing"   // no Authorization header (counted, never throttled)
	failInvalid   = "invalid"   // a malformed header or an unknown token
	failThrottled = "throttled" // refused unchecked: the address is throttled
)

// authMetrics counts refused authentications.
type authMetrics struct {
	failures *prometheus.CounterVec
}

// newAuthMetrics registers courier_api_auth_failures_total on reg, or
// shares the counter already registered there (a second Handler); nil reg
// counts without exporting.
func newAuthMetrics(reg prometheus.Registerer) (authMetrics, error) {
	failures := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "courier_api_auth_failures_total",
		Help: "HTTP API requests refused for want of a valid token, by reason: missing (no Authorization header), " +
			"invalid (a malformed header or an unknown token), throttled (refused without checking the token: " +
			"the client's address failed too often).",
	}, []string{"reason"})
	if reg != nil {
		var err error
		if failures, err = server.Register(reg, failures); err != nil {
			return authMetrics{}, fmt.Errorf("api: register metrics: %w", err)
		}
	}
	// The series exist at zero, so that rates and alerts see them before
	// the first failure.
	for _, reason := range []string{failMissing, failInvalid, failThrottled} {
		failures.WithLabelValues(reason)
	}
	return authMetrics{failures: failures}, nil
}

// clientAddr is the address r came from, as the connection says: a proxy's
// X-Forwarded-For is not trusted, since any client can send one. It is the
// zero Addr when RemoteAddr is no IP address (a Unix socket).
func clientAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr()
}

// clientKey is the failure bucket of addr: the listener's unit of a client
// (server.ClientOf: the IPv4 address, IPv4-mapped IPv6 included, or the
// IPv6 /64), so that one host cannot spend a fresh address per guess.
func clientKey(addr netip.Addr) netip.Addr {
	return server.ClientOf(addr.Unmap().WithZone("")).Addr()
}

// throttleHold is the longest a throttled request waits for its refusal:
// a second, or until the address may try again if that is sooner.
const throttleHold = time.Second

// maxHeld bounds the throttled requests held at once, so that holding them
// costs at most this many goroutines (about 8 MiB); past it they are
// refused at once.
const maxHeld = 1024

// refuseThrottled answers a request from a throttled address with 429,
// after holding it for h.hold or until the address may try again, and
// reports whether it did. The token is not looked at, and nothing is
// logged: a flood must cost neither hashing nor log lines.
func (h *Handler) refuseThrottled(w http.ResponseWriter, r *http.Request) bool {
	if h.failures == nil {
		return false
	}
	addr := clientAddr(r)
	if !addr.IsValid() {
		return false
	}
	wait := h.failures.wait(clientKey(addr), h.now())
	if wait <= 0 {
		return false
	}
	h.metrics.failures.WithLabelValues(failThrottled).Inc()
	if hold := min(wait, h.hold); hold > 0 && h.takeHoldPlace() {
		defer h.held.Add(-1)
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-r.Context().Done(): // the client left
			t.Stop()
			return true
		}
	}
	writeError(w, throttledError(wait))
	return true
}

// takeHoldPlace takes one of the maxHeld places of held requests, and reports
// whether there was one; the caller gives it back.
func (h *Handler) takeHoldPlace() bool {
	if h.held.Add(1) > maxHeld {
		h.held.Add(-1)
		return false
	}
	return true
}

// throttledError is the reply to a throttled address. The connection is
// kept: a new one would cost the server more than the next, held, request
// on this one.
func throttledError(wait time.Duration) *Error {
	e := apiError(wire.CodeRateLimited, "Authorization",
		"too many failed authentications from this address; retry in "+wait.Round(time.Millisecond).String())
	e.retryAfter = wait
	return e
}

// failed records a failed authentication of r (on route; "" for none):
// counts it, logs it with the client's address (never the token) and
// spends one failure of the address's bucket. It returns the reply: e, or
// the throttled one when other requests from the address emptied the
// bucket since ServeHTTP looked.
func (h *Handler) failed(r *http.Request, route, reason string, e *Error) *Error {
	addr := clientAddr(r)
	var wait time.Duration
	if h.failures != nil && addr.IsValid() {
		var spent bool
		if spent, wait = h.failures.take(clientKey(addr), h.now()); !spent {
			h.metrics.failures.WithLabelValues(failThrottled).Inc()
			return throttledError(wait)
		}
	}
	h.metrics.failures.WithLabelValues(reason).Inc()
	h.log.Info("api authentication failed", "addr", logAddr(r, addr), "reason", reason, "method", r.Method, "route", route)
	if wait > 0 {
		// This failure spent the last one: the address is throttled from
		// now on, which is logged once; its further requests are counted
		// only.
		h.log.Warn("api client throttled after repeated authentication failures",
			"addr", logAddr(r, addr), "retry_in", wait.Round(time.Millisecond), "limit", h.opts.FailedAuthLimit.String())
	}
	return e
}

// logAddr is the client's address for the logs: RemoteAddr as given when
// it is no IP address.
func logAddr(r *http.Request, addr netip.Addr) string {
	if !addr.IsValid() {
		return r.RemoteAddr
	}
	return addr.String()
}

package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Admin configures the HTTP API under /v1 that courier run serves.
type Admin struct {
	// Addr is a listener of the API's own; "" serves the API on http.addr.
	Addr string `koanf:"addr"`
	// TLS serves Addr over TLS; without Addr the API has http.tls.
	// Default off.
	TLS ListenTLS `koanf:"tls"`
	// Tokens are the bearer tokens the API accepts.
	Tokens []AdminToken `koanf:"tokens"`
	// InsecureNoAuth serves the API without authentication when no token
	// is configured: for development on a trusted machine only.
	InsecureNoAuth bool `koanf:"insecure_no_auth"`
	// RateLimit is "N per DURATION" (or "N/DURATION"), per token: a token
	// bucket holding N requests, refilled at N per DURATION; "" = no limit.
	RateLimit string `koanf:"rate_limit"`
	// AllowedHosts are the host names, without port, that requests to an
	// API without authentication (InsecureNoAuth) may carry in their Host
	// header besides IP addresses and localhost: the guard against DNS
	// rebinding. Default none.
	AllowedHosts []string `koanf:"allowed_hosts"`
	// FailedAuthLimit is "N per DURATION" (or "N/DURATION"), per client
	// address: a bucket of N failed authentications, refilled at N per
	// DURATION; once it is empty, the address gets 429 without its token
	// being checked until the bucket refills. "" = no limit. Default
	// AdminFailedAuthLimitDefault.
	FailedAuthLimit string `koanf:"failed_auth_limit"`
	// MaxBatch is the most jobs one batch request may carry (1 to 1000).
	MaxBatch int `koanf:"max_batch"`
	// MaxQueues caps the queues producer tokens without a queue list
	// create by enqueueing: past it, their enqueue to a queue that does
	// not exist is refused (403); queues that exist never are. At least 1.
	// Default AdminMaxQueuesDefault.
	MaxQueues int `koanf:"max_queues"`
	// MaxBodyBytes bounds a batch request's body; a single enqueue's body
	// is bounded by jobs.max_payload_bytes in base64 plus 64 KiB.
	MaxBodyBytes int `koanf:"max_body_bytes"`
	// ReadTimeout, WriteTimeout and IdleTimeout bound reading a request,
	// writing its response, and an idle keep-alive connection on
	// admin.addr's listener; a request's work ends before WriteTimeout.
	ReadTimeout  time.Duration `koanf:"read_timeout"`
	WriteTimeout time.Duration `koanf:"write_timeout"`
	IdleTimeout  time.Duration `koanf:"idle_timeout"`
}

// Defaults and bounds of the admin section.
const (
	AdminRateLimitDefault       = "100 per 1s"
	AdminFailedAuthLimitDefault = "10 per 1m"
	AdminMaxBatchDefault        = 1000
	AdminMaxBatchLimit          = 1000
	AdminMaxQueuesDefault       = 1000
	AdminMaxBodyBytesDefault    = 16 << 20
	AdminReadTimeoutDefault     = 30 * time.Second
	AdminWriteTimeoutDefault    = 30 * time.Second
	AdminIdleTimeoutDefault     = 2 * time.Minute
)

func adminDefault() Admin {
	return Admin{
		RateLimit:       AdminRateLimitDefault,
		FailedAuthLimit: AdminFailedAuthLimitDefault,
		MaxBatch:        AdminMaxBatchDefault,
		MaxQueues:       AdminMaxQueuesDefault,
		MaxBodyBytes:    AdminMaxBodyBytesDefault,
		ReadTimeout:     AdminReadTimeoutDefault,
		WriteTimeout:    AdminWriteTimeoutDefault,
		IdleTimeout:     AdminIdleTimeoutDefault,
	}
}

// RateLimitValue returns the parsed admin.rate_limit of a loaded
// configuration; the zero value means no limit.
func (a *Admin) RateLimitValue() worker.RateLimit {
	limit, _ := worker.ParseRateLimit(a.RateLimit) // validated by Load
	return limit
}

// FailedAuthLimitValue returns the parsed admin.failed_auth_limit of a
// loaded configuration; the zero value means no limit.
func (a *Admin) FailedAuthLimitValue() worker.RateLimit {
	limit, _ := worker.ParseRateLimit(a.FailedAuthLimit) // validated by Load
	return limit
}

// RequireAuth reports, as an *Error naming admin.tokens, a configuration
// that would serve the API to anyone: no token and no insecure_no_auth.
// courier run calls it; the client commands, which share the file, do not.
func (a *Admin) RequireAuth() error {
	if len(a.Tokens) > 0 || a.InsecureNoAuth {
		return nil
	}
	return &Error{Problems: []Problem{{
		Key: "admin.tokens",
		Message: "no API token is configured, so the HTTP API under /v1 would be open to anyone: " +
			"add one (name, token of at least " + strconv.Itoa(AdminTokenMinLen) + " random characters, role producer or admin), " +
			"or set admin.insecure_no_auth: true on a trusted development machine",
	}}}
}

// validate adds a problem for every invalid admin key.
func (a *Admin) validate(ps *problems) {
	if a.Addr != "" {
		if err := checkHostPort(a.Addr); err != nil {
			ps.add("admin.addr", "%v", err)
		}
	}
	if a.Addr == "" && a.TLS != (ListenTLS{}) {
		ps.add("admin.tls", "applies to admin.addr's own listener; set admin.addr, or use http.tls for the API on http.addr")
	} else {
		a.TLS.validate("admin.tls", ps)
	}
	for i, h := range a.AllowedHosts {
		if !isHostName(h) {
			ps.add("admin.allowed_hosts["+strconv.Itoa(i)+"]", "%q is not a host name; write the name alone, without scheme or port, as in \"courier.dev.internal\"", h)
		}
	}
	if a.InsecureNoAuth && len(a.Tokens) > 0 {
		ps.add("admin.insecure_no_auth", "is true, but tokens are configured; remove one or the other")
	}
	validateTokens(a.Tokens, ps)
	validateRateLimit("admin.rate_limit", a.RateLimit, ps)
	validateRateLimit("admin.failed_auth_limit", a.FailedAuthLimit, ps)
	if a.MaxBatch < 1 || a.MaxBatch > AdminMaxBatchLimit {
		ps.add("admin.max_batch", "must be 1 to %d (got %d)", AdminMaxBatchLimit, a.MaxBatch)
	}
	if a.MaxQueues < 1 {
		ps.add("admin.max_queues", "must be at least 1 (got %d); raise it rather than turn the cap off", a.MaxQueues)
	}
	if a.MaxBodyBytes < 1024 || a.MaxBodyBytes > worker.MaxPayloadBytesLimit {
		ps.add("admin.max_body_bytes", "must be 1024 to %d (got %d)", worker.MaxPayloadBytesLimit, a.MaxBodyBytes)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"admin.read_timeout", a.ReadTimeout}, {"admin.write_timeout", a.WriteTimeout}, {"admin.idle_timeout", a.IdleTimeout}} {
		if d.v < time.Millisecond {
			ps.add(d.key, "must be at least 1ms (got %s)", d.v)
		}
	}
}

// validateRateLimit checks a rate limit of the API, "" included.
func validateRateLimit(key, s string, ps *problems) {
	if limit, err := worker.ParseRateLimit(s); err != nil {
		ps.add(key, "%v", err)
	} else if err := (worker.QueueOptions{RateLimit: limit}).Validate(); err != nil {
		ps.add(key, "%s", reason(err))
	}
}

// isHostName reports whether s is a DNS name: dot-separated labels of
// letters, digits and '-', each 1 to 63 characters.
func isHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		if strings.ContainsFunc(label, func(c rune) bool {
			return (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-'
		}) {
			return false
		}
	}
	return true
}

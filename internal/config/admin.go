package config

import (
	"errors"
	"strconv"
	"time"
	"unicode"

	"github.com/seed-53d105c9/courier/worker"
)

// Admin configures the HTTP API under /v1 that courier run serves.
type Admin struct {
	// Addr is a listener of the API's own; "" serves the API on http.addr.
	Addr string `koanf:"addr"`
	// Tokens are the bearer tokens the API accepts.
	Tokens []AdminToken `koanf:"tokens"`
	// InsecureNoAuth serves the API without authentication when no token
	// is configured: for development on a trusted machine only.
	InsecureNoAuth bool `koanf:"insecure_no_auth"`
	// RateLimit is "N per DURATION" (or "N/DURATION"), per token: a token
	// bucket holding N requests, refilled at N per DURATION; "" = no limit.
	RateLimit string `koanf:"rate_limit"`
	// MaxBatch is the most jobs one batch request may carry (1 to 1000).
	MaxBatch int `koanf:"max_batch"`
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

// AdminToken is one bearer token of the API.
type AdminToken struct {
	// Name identifies the token in logs and rate limits; never the token.
	Name string `koanf:"name"`
	// Token is the secret the client sends as "Authorization: Bearer".
	Token Secret `koanf:"token"`
	// Role is producer (enqueue and read jobs) or admin (everything).
	Role string `koanf:"role"`
}

// Admin roles.
const (
	RoleProducer = "producer"
	RoleAdmin    = "admin"
)

// Defaults and bounds of the admin section.
const (
	AdminRateLimitDefault    = "100 per 1s"
	AdminMaxBatchDefault     = 1000
	AdminMaxBatchLimit       = 1000
	AdminMaxBodyBytesDefault = 16 << 20
	AdminReadTimeoutDefault  = 30 * time.Second
	AdminWriteTimeoutDefault = 30 * time.Second
	AdminIdleTimeoutDefault  = 2 * time.Minute

	// AdminTokenMinLen is the shortest token accepted: 16 random
	// characters are beyond guessing.
	AdminTokenMinLen = 16
	adminTokenMaxLen = 4096
	adminNameMaxLen  = 64
)

func adminDefault() Admin {
	return Admin{
		RateLimit:    AdminRateLimitDefault,
		MaxBatch:     AdminMaxBatchDefault,
		MaxBodyBytes: AdminMaxBodyBytesDefault,
		ReadTimeout:  AdminReadTimeoutDefault,
		WriteTimeout: AdminWriteTimeoutDefault,
		IdleTimeout:  AdminIdleTimeoutDefault,
	}
}

// RateLimitValue returns the parsed admin.rate_limit of a loaded
// configuration; the zero value means no limit.
func (a *Admin) RateLimitValue() worker.RateLimit {
	limit, _ := parseRateLimit(a.RateLimit) // validated by Load
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
			"add one (name, token of at least " + strconv.Itoa(AdminTokenMinLen) + " characters, role producer or admin), " +
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
	if a.InsecureNoAuth && len(a.Tokens) > 0 {
		ps.add("admin.insecure_no_auth", "is true, but tokens are configured; remove one or the other")
	}
	names := map[string]int{}
	secrets := map[string]int{}
	for i, t := range a.Tokens {
		key := "admin.tokens[" + strconv.Itoa(i) + "]"
		if err := checkTokenName(t.Name); err != nil {
			ps.add(key+".name", "%v", err)
		} else if j, ok := names[t.Name]; ok {
			ps.add(key+".name", "%q is also the name of admin.tokens[%d]; names must be unique", t.Name, j)
		} else {
			names[t.Name] = i
		}
		switch secret := t.Token.Reveal(); {
		case secret == "":
			ps.add(key+".token", "is required")
		case len(secret) < AdminTokenMinLen:
			ps.add(key+".token", "is %d characters long; use at least %d random characters", len(secret), AdminTokenMinLen)
		case len(secret) > adminTokenMaxLen:
			ps.add(key+".token", "is longer than %d characters", adminTokenMaxLen)
		case !printableASCII(secret):
			ps.add(key+".token", "must be printable ASCII without spaces (it travels in an HTTP header)")
		default:
			if j, ok := secrets[secret]; ok {
				ps.add(key+".token", "is the same as admin.tokens[%d].token; each token must be different", j)
			} else {
				secrets[secret] = i
			}
		}
		if t.Role != RoleProducer && t.Role != RoleAdmin {
			ps.add(key+".role", "must be producer or admin (got %q)", t.Role)
		}
	}
	if limit, err := parseRateLimit(a.RateLimit); err != nil {
		ps.add("admin.rate_limit", "%v", err)
	} else if err := (worker.QueueOptions{RateLimit: limit}).Validate(); err != nil {
		ps.add("admin.rate_limit", "%s", reason(err))
	}
	if a.MaxBatch < 1 || a.MaxBatch > AdminMaxBatchLimit {
		ps.add("admin.max_batch", "must be 1 to %d (got %d)", AdminMaxBatchLimit, a.MaxBatch)
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

// checkTokenName allows what a queue name allows, up to 64 characters: the
// name appears in logs.
func checkTokenName(name string) error {
	if name == "" {
		return errors.New("is required")
	}
	if len(name) > adminNameMaxLen {
		return errors.New("is longer than " + strconv.Itoa(adminNameMaxLen) + " characters")
	}
	if err := worker.ValidateQueueName(name); err != nil {
		return errors.New(strconv.Quote(name) + " has characters other than A-Z a-z 0-9 . _ -")
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c > unicode.MaxASCII || c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Tokens drawn from openssl rand -hex 12, marked so a test can tell when
// one leaks.
const (
	tokenA = "f41c42a1294ae909b6497369-secret-a"
	tokenB = "82bfce431867766467f05cb6-secret-b"
)

func TestAdminDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Admin
	if a.Addr != "" || len(a.Tokens) != 0 || a.InsecureNoAuth || a.MaxBatch != 1000 || a.MaxBodyBytes != 16<<20 ||
		a.ReadTimeout != 30*time.Second || a.WriteTimeout != 30*time.Second || a.IdleTimeout != 2*time.Minute {
		t.Errorf("admin defaults: %+v", a)
	}
	if got := a.RateLimitValue(); got != (worker.RateLimit{N: 100, Per: time.Second}) {
		t.Errorf("rate limit %v, want 100 per 1s", got)
	}
	if got := a.FailedAuthLimitValue(); got != (worker.RateLimit{N: 10, Per: time.Minute}) {
		t.Errorf("failed auth limit %v, want 10 per 1m", got)
	}
	if a.TLS.Enabled() || a.TLS != (ListenTLS{}) {
		t.Errorf("admin.tls is on by default: %+v", a.TLS)
	}
	err = a.RequireAuth()
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 1 || e.Problems[0].Key != "admin.tokens" ||
		!strings.Contains(e.Problems[0].Message, "insecure_no_auth") {
		t.Errorf("RequireAuth with no token: %v; want a problem naming admin.tokens", err)
	}
}

func TestAdminTokens(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{File: writeFile(t, fmt.Sprintf(`
admin:
  addr: 127.0.0.1:0
  rate_limit: 5/1m
  failed_auth_limit: 3 per 1h
  tokens:
    - {name: checkout, token: %q, role: producer, queues: [emails, billing.v2]}
    - name: ops
      token: %q
      role: admin
`, tokenA, tokenB))})
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Admin
	if len(a.Tokens) != 2 || !reflect.DeepEqual(a.Tokens[0], AdminToken{Name: "checkout", Token: tokenA, Role: RoleProducer, Queues: []string{"emails", "billing.v2"}}) ||
		!reflect.DeepEqual(a.Tokens[1], AdminToken{Name: "ops", Token: tokenB, Role: RoleAdmin}) {
		t.Errorf("tokens: %+v", a.Tokens)
	}
	if a.RequireAuth() != nil || a.RateLimitValue() != (worker.RateLimit{N: 5, Per: time.Minute}) ||
		a.FailedAuthLimitValue() != (worker.RateLimit{N: 3, Per: time.Hour}) {
		t.Errorf("RequireAuth %v, rate limit %v, failed auth limit %v", a.RequireAuth(), a.RateLimitValue(), a.FailedAuthLimitValue())
	}
	for _, s := range []string{fmt.Sprintf("%v %+v %#v", cfg, *cfg, a.Tokens)} {
		if strings.Contains(s, "secret-") {
			t.Errorf("a token leaked: %s", s)
		}
	}
}

func TestAdminInsecure(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{Environ: []string{"COURIER_ADMIN__INSECURE_NO_AUTH=true"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Admin.RequireAuth(); err != nil {
		t.Errorf("RequireAuth with insecure_no_auth: %v", err)
	}
}

func TestAdminBadConfigs(t *testing.T) {
	t.Parallel()
	tok := func(name, token, role string) string {
		return fmt.Sprintf("    - {name: %q, token: %q, role: %q}\n", name, token, role)
	}
	tests := []badConfig{
		{"bad addr", "admin:\n  addr: nope\n", nil, "admin.addr", "host:port"},
		{"insecure with tokens", "admin:\n  insecure_no_auth: true\n  tokens:\n" + tok("a", tokenA, "admin"), nil, "admin.insecure_no_auth", "remove one"},
		{"missing name", "admin:\n  tokens:\n" + tok("", tokenA, "admin"), nil, "admin.tokens[0].name", "required"},
		{"bad name", "admin:\n  tokens:\n" + tok("a b", tokenA, "admin"), nil, "admin.tokens[0].name", "characters other than"},
		{"long name", "admin:\n  tokens:\n" + tok(strings.Repeat("n", 65), tokenA, "admin"), nil, "admin.tokens[0].name", "longer than 64"},
		{"duplicate name", "admin:\n  tokens:\n" + tok("a", tokenA, "admin") + tok("a", tokenB, "admin"), nil, "admin.tokens[1].name", "unique"},
		{"missing token", "admin:\n  tokens:\n    - {name: a, role: admin}\n", nil, "admin.tokens[0].token", "required"},
		{"short token", "admin:\n  tokens:\n" + tok("a", "short-secret", "admin"), nil, "admin.tokens[0].token", "at least 16"},
		{"token with a space", "admin:\n  tokens:\n" + tok("a", "0123456789 0123456789", "admin"), nil, "admin.tokens[0].token", "printable ASCII"},
		{"duplicate token", "admin:\n  tokens:\n" + tok("a", tokenA, "admin") + tok("b", tokenA, "producer"), nil, "admin.tokens[1].token", "different"},
		{"bad role", "admin:\n  tokens:\n" + tok("a", tokenA, "root"), nil, "admin.tokens[0].role", "producer or admin"},
		{"missing role", "admin:\n  tokens:\n    - {name: a, token: " + tokenA + "}\n", nil, "admin.tokens[0].role", "producer or admin"},
		{"unknown token key", "admin:\n  tokens:\n    - {name: a, token: " + tokenA + ", role: admin, scope: all}\n", nil, "admin.tokens[0].scope", "unknown key"},
		{"token not a section", "admin:\n  tokens: [abc]\n", nil, "admin.tokens[0]", "expected a section"},
		{"token as a number", "admin:\n  tokens:\n    - {name: a, token: 12345678901234567890, role: admin}\n", nil, "admin.tokens[0].token", "expected text"},
		{"tokens from the environment", "", []string{"COURIER_ADMIN__TOKENS=" + tokenA}, "admin.tokens", "set it in the configuration file"},
		{"bad rate limit", "admin:\n  rate_limit: lots\n", nil, "admin.rate_limit", "N per DURATION"},
		{"zero rate limit", "admin:\n  rate_limit: 0 per 1s\n", nil, "admin.rate_limit", "at least 1"},
		{"zero batch", "admin:\n  max_batch: 0\n", nil, "admin.max_batch", "1 to 1000"},
		{"huge batch", "admin:\n  max_batch: 1001\n", nil, "admin.max_batch", "1 to 1000"},
		{"tiny body", "admin:\n  max_body_bytes: 10\n", nil, "admin.max_body_bytes", "1024 to"},
		{"zero read timeout", "admin:\n  read_timeout: 0s\n", nil, "admin.read_timeout", "at least 1ms"},
		{"negative write timeout", "admin:\n  write_timeout: -1s\n", nil, "admin.write_timeout", "at least 1ms"},
		{"idle timeout as a number", "admin:\n  idle_timeout: 5\n", nil, "admin.idle_timeout", "expected a duration"},
		{"env: bad bool", "", []string{"COURIER_ADMIN__INSECURE_NO_AUTH=maybe"}, "admin.insecure_no_auth", "true or false"},
		{"weak token", "admin:\n  tokens:\n" + tok("a", "secret-secret-secret-", "admin"), nil, "admin.tokens[0].token", "too easy to guess"},
		{"bad failed auth limit", "admin:\n  failed_auth_limit: often\n", nil, "admin.failed_auth_limit", "N per DURATION"},
		{"zero failed auth limit", "admin:\n  failed_auth_limit: 0/1m\n", nil, "admin.failed_auth_limit", "at least 1"},
		{"failed auth limit as a number", "admin:\n  failed_auth_limit: 10\n", nil, "admin.failed_auth_limit", "expected text"},
		{"bad token queue", "admin:\n  tokens:\n    - {name: a, token: " + tokenA + ", role: admin, queues: [emails, 'a{b}']}\n", nil, "admin.tokens[0].queues[1]", "not a valid queue name"},
		{"empty token queue", "admin:\n  tokens:\n    - {name: a, token: " + tokenA + ", role: admin, queues: ['']}\n", nil, "admin.tokens[0].queues[0]", "not a valid queue name"},
		{"duplicate token queue", "admin:\n  tokens:\n    - {name: a, token: " + tokenA + ", role: admin, queues: [emails, audit, emails]}\n", nil, "admin.tokens[0].queues[2]", `"emails" is also admin.tokens[0].queues[0]`},
		{"token queues not a list", "admin:\n  tokens:\n    - {name: a, token: " + tokenA + ", role: admin, queues: {emails: true}}\n", nil, "admin.tokens[0].queues", "expected a list"},
		{"allowed host with a port", "admin:\n  allowed_hosts: [dev.internal:9750]\n", nil, "admin.allowed_hosts[0]", "without scheme or port"},
		{"allowed host a URL", "admin:\n  allowed_hosts: [ok.internal, 'http://dev.internal']\n", nil, "admin.allowed_hosts[1]", "not a host name"},
		{"tls without admin.addr", "admin:\n  tls:\n    cert_file: /x.pem\n    key_file: /x.key\n", nil, "admin.tls", "applies to admin.addr's own listener; set admin.addr, or use http.tls for the API on http.addr"},
		{"tls cert without key", "admin:\n  addr: 127.0.0.1:0\n  tls:\n    cert_file: /x.pem\n", nil, "admin.tls.key_file", "set both or neither"},
		{"tls missing cert file", "admin:\n  addr: 127.0.0.1:0\n  tls:\n    cert_file: /nonexistent/x.pem\n    key_file: /nonexistent/x.key\n", nil, "admin.tls.cert_file", "no such file"},
	}
	checkRefused(t, tests, func(t *testing.T, err error) {
		if strings.Contains(err.Error(), "secret-") || strings.Contains(err.Error(), "12345678901234567890") {
			t.Errorf("a token leaked into the message: %v", err)
		}
	})
}

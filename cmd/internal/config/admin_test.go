package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// TestTokenFromFileAndEnvironment: a token's secret read from token_file
// (without the line break at its end) or from the variable token_env
// names, as if it were written under token.
func TestTokenFromFileAndEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte(tokenA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := LoadFull(Sources{
		File: writeFile(t, fmt.Sprintf(`
admin:
  tokens:
    - {name: from-file, token_file: %q, role: producer, queues: [emails]}
    - {name: from-env, token_env: COURIER_OPS_TOKEN, role: admin}
`, file)),
		Environ: []string{"COURIER_OPS_TOKEN=" + tokenB},
	})
	if err != nil {
		t.Fatal(err)
	}
	tokens := l.Config.Admin.Tokens
	if len(tokens) != 2 || tokens[0].Token.Reveal() != tokenA || tokens[1].Token.Reveal() != tokenB {
		t.Errorf("tokens: %+v", tokens)
	}
	if tokens[0].TokenFile != file || tokens[1].TokenEnv != "COURIER_OPS_TOKEN" {
		t.Errorf("token_file and token_env not kept: %+v", tokens)
	}
	if len(l.Warnings) != 0 {
		t.Errorf("the variable a token_env names was warned about: %q", l.Warnings)
	}
}

func TestTokenFromFileAndEnvironmentRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good", tokenA+"\r\n")
	weak := write("weak", "secret-secret-secret-\n")
	short := write("short", "secret-x\n")
	empty := write("empty", "\n")
	spaced := write("spaced", "secret- 0123456789abcdef\n")
	missing := filepath.Join(dir, "missing")
	entry := func(i int, rest string) string { return fmt.Sprintf("    - {name: t%d, role: admin, %s}\n", i, rest) }
	tests := []badConfig{
		{"token_file missing", "admin:\n  tokens:\n" + entry(0, "token: "+tokenB) + entry(1, "token_file: "+missing), nil,
			"admin.tokens[1].token_file", "no such file or directory"},
		{"token_file too weak", "admin:\n  tokens:\n" + entry(0, "token_file: "+weak), nil,
			"admin.tokens[0].token_file", "the token in " + weak + " is too easy to guess"},
		{"token_file too short", "admin:\n  tokens:\n" + entry(0, "token_file: "+short), nil,
			"admin.tokens[0].token_file", "the token in " + short + " is 8 characters long"},
		{"token_file empty", "admin:\n  tokens:\n" + entry(0, "token_file: "+empty), nil,
			"admin.tokens[0].token_file", "the token in " + empty + " is empty"},
		{"token_file with a space", "admin:\n  tokens:\n" + entry(0, "token_file: "+spaced), nil,
			"admin.tokens[0].token_file", "printable ASCII"},
		{"token_file same as token", "admin:\n  tokens:\n" + entry(0, "token: "+tokenA) + entry(1, "token_file: "+good), nil,
			"admin.tokens[1].token_file", "is the same as the token of admin.tokens[0]"},
		{"token and token_file", "admin:\n  tokens:\n" + entry(0, "token: "+tokenA+", token_file: "+good), nil,
			"admin.tokens[0].token_file", "is set, and so is token; give the token one way"},
		{"token_file and token_env", "admin:\n  tokens:\n" + entry(0, "token_file: "+good+", token_env: X"), nil,
			"admin.tokens[0].token_env", "is set, and so is token_file"},
		{"token_env not set", "admin:\n  tokens:\n" + entry(0, "token_env: COURIER_NOT_SET"), nil,
			"admin.tokens[0].token_env", "$COURIER_NOT_SET is not set"},
		{"token_env weak", "admin:\n  tokens:\n" + entry(0, "token_env: OPS_TOKEN"), []string{"OPS_TOKEN=secret-secret-secret-"},
			"admin.tokens[0].token_env", "the token in $OPS_TOKEN is too easy to guess"},
		{"token_env empty", "admin:\n  tokens:\n" + entry(0, "token_env: OPS_TOKEN"), []string{"OPS_TOKEN="},
			"admin.tokens[0].token_env", "the token in $OPS_TOKEN is empty"},
		{"no token at all", "admin:\n  tokens:\n" + entry(0, "queues: [a]"), nil,
			"admin.tokens[0].token", "is required (or token_file, or token_env)"},
	}
	checkRefused(t, tests, func(t *testing.T, err error) {
		if strings.Contains(err.Error(), "secret-") || strings.Contains(err.Error(), tokenA) {
			t.Errorf("a token leaked into the message: %v", err)
		}
	})
}

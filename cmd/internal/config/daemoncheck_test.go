package config

import (
	"strings"
	"testing"
)

// TestCheckDaemon: what courier run refuses, and what it starts with but
// warns about, as config check reports them.
func TestCheckDaemon(t *testing.T) {
	t.Parallel()
	tok := "admin:\n  tokens:\n    - {name: a, token: " + tokenA + ", role: admin}\n"
	tests := []struct {
		name     string
		yaml     string
		problem  string // "" for none
		warnings []string
	}{
		{"no queue", "log: {level: info}\n", "queues: no queue is configured",
			[]string{"admin.tokens: no API token is configured, so courier run serves no HTTP API: requests under /v1/ get 404"}},
		{"API left out", minimal, "", []string{"admin.tokens: no API token is configured"}},
		{"API with tokens", minimal + tok, "", nil},
		{"admin.addr without tokens", minimal + "admin: {addr: 127.0.0.1:0}\n",
			"admin.tokens: no API token is configured, so the HTTP API under /v1 would be open to anyone", nil},
		{"open API", minimal + "admin: {insecure_no_auth: true}\n", "", []string{"admin.insecure_no_auth: the HTTP API is served without authentication"}},
		{"Redis certificate unchecked", minimal + tok + "redis: {tls: {enabled: true, insecure_skip_verify: true}}\n", "",
			[]string{"redis.tls.insecure_skip_verify: the Redis server's certificate is not checked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(Sources{File: writeFile(t, tt.yaml)})
			if err != nil {
				t.Fatal(err)
			}
			warnings, err := cfg.CheckDaemon()
			switch {
			case tt.problem == "" && err != nil:
				t.Errorf("CheckDaemon: %v", err)
			case tt.problem != "" && (!IsProblem(err) || !strings.Contains(err.Error(), tt.problem)):
				t.Errorf("CheckDaemon: %v; want a problem %q", err, tt.problem)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q; want %d", warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(warnings[i], w) {
					t.Errorf("warning %q, want it to start with %q", warnings[i], w)
				}
			}
		})
	}
}

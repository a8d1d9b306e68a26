package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestConfigErrorsHideCredentials: a password or the user information of
// a URL given where a key expects something else (a redis://user:pass@
// address, user:pass@host:port, an allow-list entry written as a URL with
// credentials, a URL with a password in its query) never reaches a
// configuration error, neither its text nor its problems as config check
// --json prints them; the rest of the message still says what is wrong.
func TestConfigErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	const hook = "queues:\n  hooks:\n    handler: webhook\n    webhook:\n      url: https://hooks.example.com/x\n"
	tests := []struct {
		name    string
		yaml    string
		environ []string
		key     string
		secret  string
	}{
		{"redis URL", "redis:\n  addr: ['redis://alice:Hunter2pass@10.0.0.1:6379']\n", nil, "redis.addr[0]", "Hunter2pass"},
		{"redis URL, user only", "redis:\n  addr: ['rediss://apikey0123456789@10.0.0.1:6379']\n", nil, "redis.addr[0]", "apikey0123456789"},
		{"user:pass@host from the environment", "", []string{"COURIER_REDIS__ADDR=alice:Hunter2pass@10.0.0.1:6379"}, "redis.addr[0]", "Hunter2pass"},
		{"allow list URL", hook + "      allow_hosts: ['https://bob:Sekretpass@hooks.example.com']\n", nil, "queues.hooks.webhook.allow_hosts[0]", "Sekretpass"},
		{"allow list URL with a query", hook + "      allow_hosts: ['https://hooks.example.com/?token=Qtoken0123456']\n", nil, "queues.hooks.webhook.allow_hosts[0]", "Qtoken0123456"},
		{"allowed host URL", "admin:\n  allowed_hosts: ['http://carol:Carolpass1@dev.internal']\n", nil, "admin.allowed_hosts[0]", "Carolpass1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := Sources{Environ: tt.environ}
			if tt.yaml != "" {
				src.File = writeFile(t, tt.yaml)
			}
			_, err := Load(src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load: %v; want problems", err)
			}
			found := false
			for _, p := range e.Problems {
				found = found || p.Key == tt.key
			}
			if !found {
				t.Errorf("no problem for %s: %v", tt.key, err)
			}
			asJSON, _ := json.Marshal(e.Problems)
			for _, text := range []string{err.Error(), string(asJSON)} {
				if strings.Contains(strings.ToLower(text), strings.ToLower(tt.secret)) {
					t.Errorf("the error shows %s:\n%s", tt.secret, text)
				}
			}
			if !strings.Contains(err.Error(), "[redacted]") {
				t.Errorf("the error does not say what it left out:\n%v", err)
			}
		})
	}
}

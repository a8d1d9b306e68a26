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
// credentials, a URL with a token in its query) never reaches a
// configuration error, neither its text nor its problems as config check
// --json prints them; the message still says what is wrong, with
// [redacted] in their place.
func TestConfigErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	const hook = "queues:\n  hooks:\n    handler: webhook\n    webhook:\n      url: https://hooks.example.com/x\n"
	secrets := []string{"Hunter2pass", "apikey0123456789", "Sekretpass", "Qtoken0123456", "Carolpass1"}
	tests := []badConfig{
		{"redis URL", "redis:\n  addr: ['redis://alice:Hunter2pass@10.0.0.1:6379']\n", nil, "redis.addr[0]", "redis://[redacted]@10.0.0.1:6379"},
		{"redis URL, user only", "redis:\n  addr: ['rediss://apikey0123456789@10.0.0.1:6379']\n", nil, "redis.addr[0]", "rediss://[redacted]@"},
		{"user:pass@host from the environment", "", []string{"COURIER_REDIS__ADDR=alice:Hunter2pass@10.0.0.1:6379"}, "redis.addr[0]", "[redacted]@10.0.0.1"},
		{"allow list URL", hook + "      allow_hosts: ['https://bob:Sekretpass@hooks.example.com']\n", nil,
			"queues.hooks.webhook.allow_hosts[0]", `"https://[redacted]@hooks.example.com" is not a host`},
		{"allow list URL with a query", hook + "      allow_hosts: ['https://hooks.example.com/?token=Qtoken0123456']\n", nil,
			"queues.hooks.webhook.allow_hosts[0]", "?token=[redacted]"},
		{"allowed host URL", "admin:\n  allowed_hosts: ['http://carol:Carolpass1@dev.internal']\n", nil, "admin.allowed_hosts[0]", "http://[redacted]@dev.internal"},
	}
	checkRefused(t, tests, func(t *testing.T, err error) {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%v: want problems", err)
		}
		asJSON, _ := json.Marshal(e.Problems)
		for _, text := range []string{err.Error(), string(asJSON)} {
			for _, secret := range secrets {
				if strings.Contains(strings.ToLower(text), strings.ToLower(secret)) {
					t.Errorf("the error shows %s:\n%s", secret, text)
				}
			}
		}
	})
}

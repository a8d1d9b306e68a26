package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderYAML: courier config print's YAML shows every key with the
// layer that set it, and no secret.
func TestRenderYAML(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(tokenA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := LoadFull(Sources{
		File: writeFile(t, fmt.Sprintf(`
redis:
  db: 2
admin:
  tokens:
    - {name: ops, token: %q, role: admin}
    - {name: ci, token_file: %q, role: producer, queues: [emails]}
queues:
  emails:
    handler: webhook
    concurrency: 3
    webhook:
      url: https://hooks.example.com/secret-path
      secret: hunter2-webhook
      headers: {Authorization: Bearer hunter2-header}
`, tokenB, tokenFile)),
		Environ: []string{"COURIER_REDIS__PASSWORD=hunter2-redis", "COURIER_LOG__LEVEL=debug"},
		Flags:   map[string]any{"redis.addr": "flag:6379"},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.YAML()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{
		"  addr: ['flag:6379'] # flag\n",
		"  password: '[redacted]' # env COURIER_REDIS__PASSWORD\n",
		"  db: 2 # file\n",
		"  prefix: courier # default\n",
		"  dial_timeout: 5s # default\n",
		"  level: debug # env COURIER_LOG__LEVEL\n",
		"  max_schedule_ahead: 8760h # default\n",
		"    - name: ops # file\n      token: '[redacted]' # file\n",
		"      token_file: " + tokenFile + " # file\n",
		"      queues: [emails] # file\n",
		"    concurrency: 3 # file\n",
		"    max_attempts: 25 # default\n",
		"    periodic: {} # default\n",
		"    # settings not shown take the handler's defaults\n    webhook:\n      url: '[redacted]' # file\n      secret: '[redacted]' # file\n",
		"        Authorization: '[redacted]' # file\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("YAML lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "timeout: 10s") {
		t.Errorf("YAML shows a handler setting that was not given:\n%s", text)
	}
	checkNoSecret(t, text)

	out, err = l.JSON()
	if err != nil {
		t.Fatal(err)
	}
	checkNoSecret(t, string(out))
	var doc struct {
		Config  map[string]any    `json:"config"`
		Sources map[string]string `json:"sources"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	for key, want := range map[string]string{
		"redis.addr":                      "flag",
		"redis.password":                  "env COURIER_REDIS__PASSWORD",
		"redis.prefix":                    "default",
		"admin.tokens[1].token_file":      "file",
		"queues.emails.webhook.url":       "file",
		"queues.emails.backoff.base":      "default",
		"admin.allowed_hosts":             "default",
		"queues.emails.concurrency":       "file",
		"http.max_connections_per_client": "default",
	} {
		if got := doc.Sources[key]; got != want {
			t.Errorf("sources[%q] = %q, want %q", key, got, want)
		}
	}
	redis, _ := doc.Config["redis"].(map[string]any)
	if redis["db"] != float64(2) || redis["dial_timeout"] != "5s" || redis["password"] != "[redacted]" {
		t.Errorf("config.redis = %v", redis)
	}
}

func checkNoSecret(t *testing.T, s string) {
	t.Helper()
	for _, secret := range []string{"hunter2", "secret-path", tokenA, tokenB} {
		if strings.Contains(s, secret) {
			t.Errorf("a secret (%s) was rendered:\n%s", secret, s)
		}
	}
}

// TestRenderRoundTrip: the rendered YAML, loaded as a file, gives the same
// configuration: it is the configuration, not a description of it.
func TestRenderRoundTrip(t *testing.T) {
	t.Parallel()
	l, err := LoadFull(Sources{
		File: writeFile(t, `
http: {addr: ":9750", max_connections: 10, max_connections_per_client: 5}
admin: {allowed_hosts: [dev.internal], insecure_no_auth: true, rate_limit: 5/1s}
dead: {max_age: 36h}
queues:
  audit:
    handler: log
    rate_limit: 10 per 1m
    backoff: {steps: [1s, 1m30s]}
    priority_weights: {high: 3}
    periodic:
      tick: {every: 1h30m, payload: '{"a": "b: c"}'}
    log: {payload_bytes: 10}
  order_events.v2:
    handler: log
`),
		Environ: []string{"COURIER_REDIS__ADDR=a:1,b:2", "COURIER_SHUTDOWN__TIMEOUT=40s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := l.YAML()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(Sources{File: writeFile(t, string(out))})
	if err != nil {
		t.Fatalf("the rendered YAML does not load: %v\n%s", err, out)
	}
	// %+v prints an empty list or map as it prints none, which is what
	// they mean here.
	if got, want := fmt.Sprintf("%+v", *again), fmt.Sprintf("%+v", *l.Config); got != want {
		t.Errorf("the rendered YAML loads as\n%s\nwant\n%s\n%s", got, want, out)
	}
}

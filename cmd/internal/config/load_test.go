package config

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// writeFile writes a config file into a temporary directory.
func writeFile(t *testing.T, yamlText string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "courier.yaml")
	if err := os.WriteFile(path, []byte(yamlText), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const minimal = `
queues:
  emails:
    handler: webhook
    webhook:
      url: https://hooks.example.com/hook
`

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	if !reflect.DeepEqual(*cfg, want) {
		t.Errorf("Load with no sources = %+v, want the defaults %+v", *cfg, want)
	}
	if cfg.Shutdown.Timeout != 25*time.Second || cfg.HTTP.Addr != "127.0.0.1:9750" || cfg.Redis.Prefix != "courier" {
		t.Errorf("defaults drifted from the documented ones: %+v", cfg)
	}
}

func TestQueueDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{File: writeFile(t, minimal)})
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.Queues["emails"]
	if q.Concurrency != 10 || q.MaxAttempts != 25 || q.Timeout != 30*time.Minute ||
		q.Backoff.Base != 5*time.Second || q.Backoff.Cap != 6*time.Hour || q.Backoff.Steps != nil {
		t.Errorf("queue defaults: %+v", q)
	}
}

// TestLayers checks the order: defaults < file < environment < flags.
func TestLayers(t *testing.T) {
	t.Parallel()
	path := writeFile(t, minimal+`
redis:
  addr: file:1
  db: 3
log:
  level: warn
  format: json
shutdown:
  timeout: 7s
`)
	cfg, err := Load(Sources{
		File: path,
		Environ: []string{
			"COURIER_LOG__LEVEL=debug",
			"COURIER_REDIS__ADDR=env1:6379, env2:6379",
			"COURIER_QUEUES__EMAILS__MAX_ATTEMPTS=5",
			"COURIER_QUEUES__EMAILS__BACKOFF__STEPS=1s,2m",
			"COURIER_TEST_REDIS_IMAGE=redis:7", // no double underscore: not configuration
			"PATH=/usr/bin",
		},
		Flags: map[string]any{"redis.addr": "flag:6379"},
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"redis.addr (flag over env over file)", cfg.Redis.Addr, []string{"flag:6379"}},
		{"redis.db (file)", cfg.Redis.DB, 3},
		{"log.level (env over file)", cfg.Log.Level, "debug"},
		{"log.format (file)", cfg.Log.Format, "json"},
		{"shutdown.timeout (file)", cfg.Shutdown.Timeout, 7 * time.Second},
		{"queues.emails.max_attempts (env)", cfg.Queues["emails"].MaxAttempts, 5},
		{"queues.emails.backoff.steps (env list)", cfg.Queues["emails"].Backoff.Steps, []time.Duration{time.Second, 2 * time.Minute}},
		{"queues.emails.concurrency (default)", cfg.Queues["emails"].Concurrency, 10},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestEnvList(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{Environ: []string{"COURIER_REDIS__ADDR=a:1,b:2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Redis.Addr, []string{"a:1", "b:2"}) {
		t.Errorf("redis.addr = %v", cfg.Redis.Addr)
	}
}

func TestQueueNameWithDots(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{File: writeFile(t, `
queues:
  billing.v2-eu:
    handler: log
`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Queues["billing.v2-eu"]; !ok {
		t.Errorf("queues = %v; the dotted name was split", slices.Collect(func(yield func(string) bool) {
			for k := range cfg.Queues {
				yield(k)
			}
		}))
	}
}

// TestBadConfigs: each bad configuration fails with its key named.
func TestBadConfigs(t *testing.T) {
	t.Parallel()
	tests := []badConfig{
		{"unknown top-level key", "redsi:\n  addr: x:1\n", nil, "redsi", "unknown key"},
		{"unknown nested key with suggestion", "redis:\n  adr: x:1\n", nil, "redis.adr", `did you mean "addr"?`},
		{"unknown queue key", minimal + "    concurency: 3\n", nil, "queues.emails.concurency", `unknown key (did you mean "concurrency"?)`},
		{"unknown top-level key, letters swapped", "redsi:\n  addr: x:1\n", nil, "redsi", `did you mean "redis"?`},
		{"unknown queue key far from any", minimal + "    colour: blue\n", nil, "queues.emails.colour", "known here: backoff, concurrency, durability, handler, id_retention, key_concurrency, key_rate_limit, max_attempts, partitions, periodic, priority_weights, rate_limit, retain_completed, timeout, webhook"},
		{"handler section misspelt", minimal + "    webhok:\n      url: http://x/\n", nil, "queues.emails.webhok", `did you mean "webhook"?`},
		{"handler name misspelt", "queues:\n  emails:\n    handler: webhok\n", nil, "queues.emails.handler", `unknown handler "webhok" (did you mean "webhook"?)`},
		{"handler setting misspelt", minimal + "      timout: 5s\n", nil, "queues.emails.webhook.timout", `did you mean "timeout"?`},
		{"log setting misspelt", "queues:\n  audit:\n    handler: log\n    log:\n      payload_byte: 10\n", nil, "queues.audit.log.payload_byte", `did you mean "payload_bytes"?`},
		{"backoff key misspelt", minimal + "    backoff:\n      bse: 1s\n", nil, "queues.emails.backoff.bse", `did you mean "base"?`},
		{"http key misspelt", "http:\n  max_conections: 5\n", nil, "http.max_conections", `did you mean "max_connections"`},
		{"http tls key misspelt", "http:\n  tls:\n    cert: x\n", nil, "http.tls.cert", `did you mean "cert_file"?`},
		{"admin key misspelt", "admin:\n  insecure_noauth: true\n", nil, "admin.insecure_noauth", `did you mean "insecure_no_auth"?`},
		{"admin token key misspelt", "admin:\n  tokens:\n    - {name: a, tokn: x, role: admin}\n", nil, "admin.tokens[0].tokn", `did you mean "token"`},
		{"zero max queues", "admin:\n  max_queues: 0\n", nil, "admin.max_queues", "at least 1"},
		{"negative max queues", "admin:\n  max_queues: -5\n", nil, "admin.max_queues", "at least 1"},
		{"max queues as text", "admin:\n  max_queues: lots\n", nil, "admin.max_queues", "expected a whole number"},
		{"max queues as a list", "admin:\n  max_queues: [1]\n", nil, "admin.max_queues", "expected a whole number"},
		{"redis sentinel key misspelt", "redis:\n  sentinel:\n    mastr: m\n", nil, "redis.sentinel.mastr", `did you mean "master"?`},
		{"env: unknown key names the variable", "", []string{"COURIER_REDIS__ADR=x:1"}, "redis.adr", `unknown key (did you mean "addr"?) (set by COURIER_REDIS__ADR)`},
		{"env: queue key misspelt", minimal, []string{"COURIER_QUEUES__EMAILS__CONCURENCY=3"}, "queues.emails.concurency", `unknown key (did you mean "concurrency"?) (set by COURIER_QUEUES__EMAILS__CONCURENCY)`},
		{"wrong type: text for a number", "redis:\n  db: three\n", nil, "redis.db", "expected a whole number"},
		{"wrong type: list for text", "log:\n  level: [a]\n", nil, "log.level", "expected text"},
		{"wrong type: number for a duration", "shutdown:\n  timeout: 30\n", nil, "shutdown.timeout", "expected a duration"},
		{"bad duration", "shutdown:\n  timeout: 30 seconds\n", nil, "shutdown.timeout", "expected a duration"},
		{"negative shutdown timeout", "shutdown:\n  timeout: -1s\n", nil, "shutdown.timeout", "must be positive"},
		{"negative concurrency", minimal + "    concurrency: -2\n", nil, "queues.emails.concurrency", "at least 1"},
		{"zero concurrency", minimal + "    concurrency: 0\n", nil, "queues.emails.concurrency", "at least 1"},
		{"huge concurrency", minimal + "    concurrency: 20000\n", nil, "queues.emails.concurrency", "at most 10000"},
		{"zero max attempts", minimal + "    max_attempts: 0\n", nil, "queues.emails.max_attempts", "at least 1"},
		{"negative timeout", minimal + "    timeout: -5m\n", nil, "queues.emails.timeout", "at least 1ms"},
		{"cap below base", minimal + "    backoff:\n      base: 1m\n      cap: 1s\n", nil, "queues.emails.backoff.cap", "at least base"},
		{"negative step", minimal + "    backoff:\n      steps: [1s, -1s]\n", nil, "queues.emails.backoff.steps[1]", "negative"},
		{"missing handler", "queues:\n  emails:\n    concurrency: 2\n", nil, "queues.emails.handler", "is required"},
		{"unknown handler", "queues:\n  emails:\n    handler: smtp\n", nil, "queues.emails.handler", `unknown handler "smtp"`},
		{"settings of another handler", "queues:\n  emails:\n    handler: log\n    webhook:\n      url: http://x/\n", nil, "queues.emails.webhook", `queue's handler is "log"`},
		{"handler setting missing", "queues:\n  emails:\n    handler: webhook\n", nil, "queues.emails.webhook.url", "required"},
		{"handler setting unknown", minimal + "      uri: http://x/\n", nil, "queues.emails.webhook.uri", "unknown key"},
		{"handler setting wrong type", minimal + "      timeout: soon\n", nil, "queues.emails.webhook.timeout", "expected a duration"},
		{"bad queue name", "queues:\n  'a{b}':\n    handler: log\n", nil, "queues.a{b}", "not a valid queue name"},
		{"bad redis address", "redis:\n  addr: [localhost]\n", nil, "redis.addr[0]", "host:port"},
		{"no redis address", "redis:\n  addr: []\n", nil, "redis.addr", "at least one"},
		{"bad prefix", "redis:\n  prefix: 'a b'\n", nil, "redis.prefix", ""},
		{"negative db", "redis:\n  db: -1\n", nil, "redis.db", "negative"},
		{"tls keys without enabled", "redis:\n  tls:\n    ca_file: /x\n", nil, "redis.tls.enabled", "set it to true"},
		{"cert without key", "redis:\n  tls:\n    enabled: true\n    cert_file: /x\n", nil, "redis.tls.cert_file", "set both"},
		{"missing ca file", "redis:\n  tls:\n    enabled: true\n    ca_file: /nonexistent/ca.pem\n", nil, "redis.tls.ca_file", "no such file"},
		{"sentinel password without master", "redis:\n  sentinel:\n    password: x\n", nil, "redis.sentinel.master", "required"},
		{"bad log level", "log:\n  level: loud\n", nil, "log.level", "debug, info, warn or error"},
		{"bad log format", "log:\n  format: xml\n", nil, "log.format", "text or json"},
		{"bad http addr", "http:\n  addr: nope\n", nil, "http.addr", "host:port"},
		{"lease too short", "lease:\n  duration: 1ms\n", nil, "lease.duration", "at least 30ms"},
		{"payload limit too big", "jobs:\n  max_payload_bytes: 999999999999\n", nil, "jobs.max_payload_bytes", "must be 0 to"},
		{"section given a value", "redis: 5\n", nil, "redis", "expected a section"},
		{"leader lease too short", "leader:\n  lease: 10ms\n", nil, "leader.lease", "at least 300ms"},
		{"dead max jobs zero", "dead:\n  max_jobs: 0\n", nil, "dead.max_jobs", "at least 1"},
		{"recover interval negative", "recover:\n  interval: -1s\n", nil, "recover.interval", "negative"},
		{"periodic with every and cron", minimal + "    periodic:\n      t:\n        every: 1m\n        cron: '@hourly'\n", nil, "queues.emails.periodic.t", "set one"},
		{"periodic with neither", minimal + "    periodic:\n      t:\n        payload: x\n", nil, "queues.emails.periodic.t", "needs every or cron"},
		{"periodic every too short", minimal + "    periodic:\n      t:\n        every: 100ms\n", nil, "queues.emails.periodic.t.every", "at least 1s"},
		{"periodic bad cron", minimal + "    periodic:\n      t:\n        cron: 'every day'\n", nil, "queues.emails.periodic.t.cron", "every day"},
		{"periodic bad name", minimal + "    periodic:\n      'a b':\n        every: 1m\n", nil, "queues.emails.periodic.a b", "allowed are"},
		{"periodic unknown key", minimal + "    periodic:\n      t:\n        evry: 1m\n", nil, "queues.emails.periodic.t.evry", `did you mean "every"?`},
		{"env: wrong type", "", []string{"COURIER_REDIS__DB=x"}, "redis.db", "expected a whole number"},
		{"env: unknown key", "", []string{"COURIER_REDIS__ADRESS=x:1"}, "redis.adress", "unknown key"}, //nolint:misspell // the typo is the case
		{"env: bad bool", "", []string{"COURIER_REDIS__TLS__ENABLED=yes please"}, "redis.tls.enabled", "true or false"},
		{"rate limit without a window", minimal + "    rate_limit: '100'\n", nil, "queues.emails.rate_limit", `expected "N per DURATION" such as "100 per 1s"`},
		{"rate limit without a count", minimal + "    rate_limit: per 1s\n", nil, "queues.emails.rate_limit", `expected "N per DURATION"`},
		{"rate limit with another word", minimal + "    rate_limit: 100 every 1s\n", nil, "queues.emails.rate_limit", `expected "N per DURATION"`},
		{"rate limit count not a number", minimal + "    rate_limit: ten per 1s\n", nil, "queues.emails.rate_limit", `"ten" is not a whole number`},
		{"rate limit count negative", minimal + "    rate_limit: -1/1s\n", nil, "queues.emails.rate_limit", `"-1" is not a whole number`},
		{"rate limit window in words", minimal + "    rate_limit: 100 per second\n", nil, "queues.emails.rate_limit", `"second" is not a duration`},
		{"rate limit window negative", minimal + "    rate_limit: 100/-1s\n", nil, "queues.emails.rate_limit", `"-1s" is not a duration`},
		{"rate limit of zero jobs", minimal + "    rate_limit: 0 per 1s\n", nil, "queues.emails.rate_limit", "at least 1 job"},
		{"rate limit of too many jobs", minimal + "    rate_limit: 1000001 per 1h\n", nil, "queues.emails.rate_limit", "at most 1000000 jobs"},
		{"rate limit window zero", minimal + "    rate_limit: 100 per 0s\n", nil, "queues.emails.rate_limit", "at least 1ms"},
		{"rate limit window not whole ms", minimal + "    rate_limit: 100 per 1.5ms\n", nil, "queues.emails.rate_limit", "whole milliseconds"},
		{"rate limit as a number", minimal + "    rate_limit: 100\n", nil, "queues.emails.rate_limit", "expected text"},
		{"env: bad rate limit", minimal, []string{"COURIER_QUEUES__EMAILS__RATE_LIMIT=100 a second"}, "queues.emails.rate_limit", `expected "N per DURATION"`},
		{"priority weight unknown", minimal + "    priority_weights:\n      hgh: 8\n", nil, "queues.emails.priority_weights.hgh", `did you mean "high"?`},
		{"priority weight of another name", minimal + "    priority_weights:\n      urgent: 8\n", nil, "queues.emails.priority_weights.urgent", "known here: high, low, normal"},
		{"priority weight too large", minimal + "    priority_weights:\n      high: 1001\n", nil, "queues.emails.priority_weights.high", "must be 0 to 1000 (got 1001)"},
		{"priority weight negative", minimal + "    priority_weights: {high: 8, normal: 3, low: -1}\n", nil, "queues.emails.priority_weights.low", "must be 0 to 1000 (got -1)"},
		{"priority weight in words", minimal + "    priority_weights:\n      normal: lots\n", nil, "queues.emails.priority_weights.normal", "expected a whole number"},
		{"priority weight fractional", minimal + "    priority_weights:\n      normal: 1.5\n", nil, "queues.emails.priority_weights.normal", "expected a whole number"},
		{"priority weights as a number", minimal + "    priority_weights: 8\n", nil, "queues.emails.priority_weights", "expected a section"},
		{"env: bad priority weight", minimal, []string{"COURIER_QUEUES__EMAILS__PRIORITY_WEIGHTS__HIGH=2000"}, "queues.emails.priority_weights.high", "must be 0 to 1000"},
		{"id retention negative", minimal + "    id_retention: -1h\n", nil, "queues.emails.id_retention", "must not be negative"},
		{"id retention over a year", minimal + "    id_retention: 8761h\n", nil, "queues.emails.id_retention", "over the limit of 8760h0m0s"},
		{"id retention under 1ms", minimal + "    id_retention: 500us\n", nil, "queues.emails.id_retention", "at least 1ms"},
		{"id retention as a number", minimal + "    id_retention: 24\n", nil, "queues.emails.id_retention", "expected a duration"},
		{"env: bad id retention", minimal, []string{"COURIER_QUEUES__EMAILS__ID_RETENTION=a day"}, "queues.emails.id_retention", "expected a duration"},
		{"partitions zero", minimal + "    partitions: 0\n", nil, "queues.emails.partitions", "must be 1 to 64 (got 0)"},
		{"partitions over 64", minimal + "    partitions: 65\n", nil, "queues.emails.partitions", "must be 1 to 64"},
		{"partitions in words", minimal + "    partitions: many\n", nil, "queues.emails.partitions", "expected a whole number"},
		{"partitions over the rate limit", minimal + "    partitions: 4\n    rate_limit: 2 per 1s\n", nil, "queues.emails.rate_limit", "shared among 4 partitions"},
		{"key concurrency negative", minimal + "    key_concurrency: -1\n", nil, "queues.emails.key_concurrency", "must be 0 to 1000000 (got -1)"},
		{"key concurrency over the limit", minimal + "    key_concurrency: 1000001\n", nil, "queues.emails.key_concurrency", "must be 0 to 1000000 (got 1000001)"},
		{"key concurrency in words", minimal + "    key_concurrency: many\n", nil, "queues.emails.key_concurrency", "expected a whole number"},
		{"key concurrency misspelt", minimal + "    key_concurency: 5\n", nil, "queues.emails.key_concurency", `did you mean "key_concurrency"?`},
		{"env: bad key concurrency", minimal, []string{"COURIER_QUEUES__EMAILS__KEY_CONCURRENCY=-5"}, "queues.emails.key_concurrency", "must be 0 to 1000000 (got -5)"},
		{"key rate limit in words", minimal + "    key_rate_limit: ten a second\n", nil, "queues.emails.key_rate_limit", `expected "N per DURATION"`},
		{"key rate limit as a number", minimal + "    key_rate_limit: 100\n", nil, "queues.emails.key_rate_limit", "expected text"},
		{"key rate limit of 0", minimal + "    key_rate_limit: 0 per 1s\n", nil, "queues.emails.key_rate_limit", "must allow at least 1 job per window (got 0)"},
		{"key rate limit window under 1ms", minimal + "    key_rate_limit: 5 per 500us\n", nil, "queues.emails.key_rate_limit", "window must be at least 1ms"},
		{"env: bad key rate limit", minimal, []string{"COURIER_QUEUES__EMAILS__KEY_RATE_LIMIT=2000000 per 1s"}, "queues.emails.key_rate_limit", "must allow at most 1000000 jobs per window"},
		{"retain_completed count negative", minimal + "    retain_completed: {count: -1}\n", nil, "queues.emails.retain_completed.count", "must be 0 to 10000000 (got -1)"},
		{"retain_completed count over the limit", minimal + "    retain_completed: {count: 10000001}\n", nil, "queues.emails.retain_completed.count", "must be 0 to 10000000"},
		{"retain_completed count in words", minimal + "    retain_completed: {count: many}\n", nil, "queues.emails.retain_completed.count", "expected a whole number"},
		{"retain_completed age without a count", minimal + "    retain_completed: {age: 24h}\n", nil, "queues.emails.retain_completed.age", "needs a count as well"},
		{"retain_completed age negative", minimal + "    retain_completed: {count: 10, age: -1h}\n", nil, "queues.emails.retain_completed.age", "must not be negative"},
		{"retain_completed age under 1s", minimal + "    retain_completed: {count: 10, age: 500ms}\n", nil, "queues.emails.retain_completed.age", "at least 1s"},
		{"retain_completed age as a number", minimal + "    retain_completed: {count: 10, age: 3600}\n", nil, "queues.emails.retain_completed.age", "expected a duration"},
		{"retain_completed key misspelt", minimal + "    retain_completed: {cuont: 10}\n", nil, "queues.emails.retain_completed.cuont", `did you mean "count"?`},
		{"env: bad retain_completed count", minimal, []string{"COURIER_QUEUES__EMAILS__RETAIN_COMPLETED__COUNT=-5"}, "queues.emails.retain_completed.count", "must be 0 to 10000000 (got -5)"},
		{"max_result_bytes negative", "jobs:\n  max_result_bytes: -1\n", nil, "jobs.max_result_bytes", "must be 0 to 268435456 (got -1)"},
		{"max_result_bytes too big", "jobs:\n  max_result_bytes: 268435457\n", nil, "jobs.max_result_bytes", "must be 0 to 268435456"},
		{"max_result_bytes in words", "jobs:\n  max_result_bytes: lots\n", nil, "jobs.max_result_bytes", "expected a whole number"},
		{"durability without a timeout", minimal + "    durability: {replicas: 1}\n", nil, "queues.emails.durability.timeout", "is required to wait for replicas"},
		{"durability timeout alone", minimal + "    durability: {timeout: 1s}\n", nil, "queues.emails.durability.timeout", "nothing waits"},
		{"durability replicas over 16", minimal + "    durability: {replicas: 17, timeout: 1s}\n", nil, "queues.emails.durability.replicas", "must be 0 to 16 (got 17)"},
		{"durability replicas negative", minimal + "    durability: {replicas: -1, timeout: 1s}\n", nil, "queues.emails.durability.replicas", "must be 0 to 16"},
		{"durability timeout over a minute", minimal + "    durability: {replicas: 1, timeout: 2m}\n", nil, "queues.emails.durability.timeout", "at most 1m0s"},
		{"durability timeout as a number", minimal + "    durability: {replicas: 1, timeout: 250}\n", nil, "queues.emails.durability.timeout", "expected a duration"},
		{"durability aof in words", minimal + "    durability: {aof: maybe, timeout: 1s}\n", nil, "queues.emails.durability.aof", "expected"},
		{"durability unknown key", minimal + "    durability: {replica: 1}\n", nil, "queues.emails.durability.replica", "replicas"},
		{"env: bad durability", minimal, []string{"COURIER_QUEUES__EMAILS__DURABILITY__REPLICAS=1"}, "queues.emails.durability.timeout", "is required"},
		{"tracing exporter unknown", "tracing:\n  exporter: jaeger\n", nil, "tracing.exporter", `must be none or otlp, or empty for OTEL_TRACES_EXPORTER (got "jaeger")`},
		{"tracing protocol unknown", "tracing:\n  protocol: http\n", nil, "tracing.protocol", "must be http/protobuf, http/json, grpc"},
		{"tracing endpoint without a scheme", "tracing:\n  endpoint: collector:4318\n", nil, "tracing.endpoint", "http:// (plain text) or https://"},
		{"tracing endpoint without a host", "tracing:\n  endpoint: 'http://:4318'\n", nil, "tracing.endpoint", "has no host"},
		{"tracing endpoint with credentials", "tracing:\n  endpoint: https://user:pw@collector\n", nil, "tracing.endpoint", "send credentials in tracing.headers"},
		{"tracing endpoint with a query", "tracing:\n  endpoint: https://collector/v1/traces?x=1\n", nil, "tracing.endpoint", "query"},
		{"tracing header name", "tracing:\n  headers:\n    'x key': v\n", nil, "tracing.headers.x key", "not a valid header name"},
		{"tracing header value", "tracing:\n  headers:\n    x-key: \"a\\nb\"\n", nil, "tracing.headers.x-key", "control character"},
		{"tracing headers as a list", "tracing:\n  headers: [a]\n", nil, "tracing.headers", "expected a map"},
		{"tracing sample ratio over 1", "tracing:\n  sample_ratio: 1.5\n", nil, "tracing.sample_ratio", "must be 0 to 1 (got 1.5)"},
		{"tracing sample ratio negative", "tracing:\n  sample_ratio: -1\n", nil, "tracing.sample_ratio", "must be 0 to 1 (got -1)"},
		{"tracing sample ratio in words", "tracing:\n  sample_ratio: half\n", nil, "tracing.sample_ratio", `expected a number from 0 to 1, got the text "half"`},
		{"tracing sample ratio as a list", "tracing:\n  sample_ratio: [1]\n", nil, "tracing.sample_ratio", "expected a number from 0 to 1, got a list"},
		{"tracing key misspelt", "tracing:\n  endpont: http://x\n", nil, "tracing.endpont", `did you mean "endpoint"?`},
		{"env: bad tracing sample ratio", "", []string{"COURIER_TRACING__SAMPLE_RATIO=2"}, "tracing.sample_ratio", "must be 0 to 1 (got 2)"},
		{"env: bad tracing exporter", "", []string{"COURIER_TRACING__EXPORTER=OTLP"}, "tracing.exporter", `(got "OTLP")`},
	}
	checkRefused(t, tests, nil)
}

func TestEveryProblemReported(t *testing.T) {
	t.Parallel()
	_, err := Load(Sources{File: writeFile(t, `
log:
  level: loud
  format: xml
queues:
  a:
    handler: log
    concurrency: -1
  b:
    handler: nope
`)})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Load: %v", err)
	}
	var keys []string
	for _, p := range e.Problems {
		keys = append(keys, p.Key)
	}
	want := []string{"log.format", "log.level", "queues.a.concurrency", "queues.b.handler"}
	if !slices.Equal(keys, want) {
		t.Errorf("problem keys %v, want %v (sorted, one per problem)", keys, want)
	}
	if lines := strings.Count(err.Error(), "\n") + 1; lines != len(want) {
		t.Errorf("message has %d lines, want %d:\n%v", lines, len(want), err)
	}
}

func TestMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(Sources{File: filepath.Join(t.TempDir(), "nope.yaml")})
	if err == nil || IsProblem(err) || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestMalformedYAML(t *testing.T) {
	t.Parallel()
	_, err := Load(Sources{File: writeFile(t, "redis:\n  addr: [unclosed\n")})
	if err == nil || !strings.Contains(err.Error(), "courier.yaml") {
		t.Errorf("Load of malformed YAML: %v", err)
	}
}

// TestSecretsNeverPrinted: passwords and webhook secrets do not appear when
// the configuration is printed or logged.
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{Environ: []string{
		"COURIER_REDIS__PASSWORD=hunter2-redis",
		"COURIER_REDIS__SENTINEL__MASTER=m",
		"COURIER_REDIS__SENTINEL__PASSWORD=hunter2-sentinel",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Redis.Password.Reveal() != "hunter2-redis" {
		t.Fatalf("password not loaded")
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg, "redis", cfg.Redis, "pw", cfg.Redis.Password)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", *cfg, "pw", cfg.Redis.Password)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", cfg, *cfg, *cfg, cfg.Redis.Password), logged.String()} {
		if strings.Contains(s, "hunter2") {
			t.Errorf("a secret leaked: %s", s)
		}
	}
	_, err = Load(Sources{File: writeFile(t, minimal+"      secret: hunter2-webhook\n      timeout: bad\n")})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("an error message leaked a secret or was missing: %v", err)
	}
}

// TestRateLimit: the forms of queues.<name>.rate_limit that parse, and what
// they give the queue.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  worker.RateLimit
	}{
		{`""`, worker.RateLimit{}},
		{`"100 per 1s"`, worker.RateLimit{N: 100, Per: time.Second}},
		{`5000 per 1m`, worker.RateLimit{N: 5000, Per: time.Minute}},
		{`100/1s`, worker.RateLimit{N: 100, Per: time.Second}},
		{`" 7 / 250ms "`, worker.RateLimit{N: 7, Per: 250 * time.Millisecond}},
		{`"  3   PER   1h30m "`, worker.RateLimit{N: 3, Per: 90 * time.Minute}},
		{`1000000/8784h`, worker.RateLimit{N: 1_000_000, Per: 8784 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(Sources{File: writeFile(t, minimal+"    rate_limit: "+tt.value+"\n")})
			if err != nil {
				t.Fatal(err)
			}
			q := cfg.Queues["emails"]
			if got := q.options().RateLimit; got != tt.want {
				t.Errorf("rate_limit: %s gave %+v, want %+v", tt.value, got, tt.want)
			}
		})
	}
	t.Run("default and environment", func(t *testing.T) {
		t.Parallel()
		cfg, err := Load(Sources{File: writeFile(t, minimal+"  audit:\n    handler: log\n"),
			Environ: []string{"COURIER_QUEUES__EMAILS__RATE_LIMIT=50/1s"}})
		if err != nil {
			t.Fatal(err)
		}
		emails, audit := cfg.Queues["emails"], cfg.Queues["audit"]
		if got := emails.options().RateLimit; got != (worker.RateLimit{N: 50, Per: time.Second}) {
			t.Errorf("rate limit from the environment: %+v", got)
		}
		if audit.RateLimit != "" || audit.options().RateLimit != (worker.RateLimit{}) {
			t.Errorf("default rate limit %q, %+v; want none", audit.RateLimit, audit.options().RateLimit)
		}
	})
}

// TestPriorityWeightsAndIDRetention: queues.<name>.priority_weights and
// id_retention reach the queue's options, from the file and the
// environment; a queue without them has strict priority and no retention.
func TestPriorityWeightsAndIDRetention(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{
		File: writeFile(t, minimal+`
    priority_weights: {high: 8, normal: 3, low: 1}
    id_retention: 24h
  audit:
    handler: log
    priority_weights:
      normal: 1
`),
		Environ: []string{"COURIER_QUEUES__AUDIT__PRIORITY_WEIGHTS__HIGH=1000", "COURIER_QUEUES__AUDIT__ID_RETENTION=1ms"},
	})
	if err != nil {
		t.Fatal(err)
	}
	emails, audit := cfg.Queues["emails"], cfg.Queues["audit"]
	if o := emails.options(); o.PriorityWeights != (worker.PriorityWeights{High: 8, Normal: 3, Low: 1}) || o.IDRetention != 24*time.Hour {
		t.Errorf("emails: weights %+v, id retention %s", o.PriorityWeights, o.IDRetention)
	}
	if o := audit.options(); o.PriorityWeights != (worker.PriorityWeights{High: 1000, Normal: 1}) || o.IDRetention != time.Millisecond {
		t.Errorf("audit: weights %+v, id retention %s", o.PriorityWeights, o.IDRetention)
	}
	if _, err := cfg.Registry(slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("registry: %v", err)
	}

	cfg, err = Load(Sources{File: writeFile(t, minimal)})
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.Queues["emails"]
	if o := q.options(); o.PriorityWeights != (worker.PriorityWeights{}) || o.IDRetention != 0 {
		t.Errorf("defaults: weights %+v, id retention %s; want strict priority and none", o.PriorityWeights, o.IDRetention)
	}
}

// TestPartitionsAndDurability: queues.<name>.partitions reaches the
// queue's options and durability the library's Config.Durability (the
// daemon's Client), from the file and the environment; a queue without
// them has one partition and no durability.
func TestPartitionsAndDurability(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{
		File: writeFile(t, minimal+`
    partitions: 8
    durability: {replicas: 1, timeout: 250ms}
  audit:
    handler: log
`),
		Environ: []string{"COURIER_QUEUES__AUDIT__DURABILITY__AOF=true", "COURIER_QUEUES__AUDIT__DURABILITY__TIMEOUT=1s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	emails, audit := cfg.Queues["emails"], cfg.Queues["audit"]
	if o := emails.options(); o.Partitions != 8 {
		t.Errorf("emails: partitions %d, want 8", o.Partitions)
	}
	if o := audit.options(); o.Partitions != 1 {
		t.Errorf("audit: partitions %d, want the default 1", o.Partitions)
	}
	w := cfg.Worker(nil)
	want := map[string]worker.Durability{
		"emails": {Replicas: 1, Timeout: 250 * time.Millisecond},
		"audit":  {AOF: true, Timeout: time.Second},
	}
	if !maps.Equal(w.Durability, want) {
		t.Errorf("worker durabilities %+v, want %+v", w.Durability, want)
	}
	if err := w.Validate(); err != nil {
		t.Errorf("worker config: %v", err)
	}
	if _, err := cfg.Registry(slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("registry: %v", err)
	}

	cfg, err = Load(Sources{File: writeFile(t, minimal)})
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Worker(nil); w.Durability != nil {
		t.Errorf("defaults: durabilities %+v, want none", w.Durability)
	}
}

// TestPriorityWeightMax: the limit the configuration checks each weight
// against is the library's.
func TestPriorityWeightMax(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		weights worker.PriorityWeights
		valid   bool
	}{
		{worker.PriorityWeights{High: priorityWeightMax}, true},
		{worker.PriorityWeights{Normal: priorityWeightMax}, true},
		{worker.PriorityWeights{Low: priorityWeightMax}, true},
		{worker.PriorityWeights{High: priorityWeightMax + 1}, false},
		{worker.PriorityWeights{Normal: priorityWeightMax + 1}, false},
		{worker.PriorityWeights{Low: priorityWeightMax + 1}, false},
	} {
		if err := (worker.QueueOptions{PriorityWeights: tt.weights}).Validate(); (err == nil) != tt.valid {
			t.Errorf("%+v: the library says %v; the configuration takes it as valid: %t", tt.weights, err, tt.valid)
		}
	}
}

// TestRegistry: the configuration builds a registry with the queues' options.
func TestRegistry(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{File: writeFile(t, minimal+`
    concurrency: 3
  audit:
    handler: log
    backoff:
      steps: [1s]
`)})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := cfg.Registry(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.Queues(); !slices.Equal(got, []string{"audit", "emails"}) {
		t.Errorf("registry queues %v", got)
	}
	q := cfg.Queues["audit"]
	opts := q.options()
	if _, ok := opts.Backoff.(worker.FixedSteps); !ok {
		t.Errorf("steps did not give FixedSteps: %T", opts.Backoff)
	}
	e := cfg.Queues["emails"]
	if o := e.options(); o.Concurrency != 3 {
		t.Errorf("concurrency %d", o.Concurrency)
	}
	if _, ok := e.options().Backoff.(worker.ExponentialBackoff); !ok {
		t.Errorf("default policy %T", e.options().Backoff)
	}
}

// badConfig is a configuration Load must refuse: from yaml ("" for no file)
// and environ, with a problem for key whose message holds msg.
type badConfig struct {
	name    string
	yaml    string
	environ []string
	key     string
	msg     string
}

// checkRefused loads each case in a parallel subtest and checks that it is
// refused as it says; more, if not nil, checks the error further.
func checkRefused(t *testing.T, tests []badConfig, more func(t *testing.T, err error)) {
	t.Helper()
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
				t.Fatalf("Load: %v; want an *Error naming %s", err, tt.key)
			}
			if more != nil {
				more(t, err)
			}
			for _, p := range e.Problems {
				if p.Key == tt.key && strings.Contains(p.Message, tt.msg) {
					return
				}
			}
			t.Errorf("problems:\n%v\nwant one for %s containing %q", err, tt.key, tt.msg)
		})
	}
}

// TestKeyConcurrency: queues.<name>.key_concurrency and key_rate_limit
// reach the queue's options, from the file and the environment; a queue
// without them limits no key.
func TestKeyConcurrency(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{
		File: writeFile(t, minimal+`
    key_concurrency: 20
    key_rate_limit: 100 per 1m
  audit:
    handler: log
  reports:
    handler: log
`),
		Environ: []string{"COURIER_QUEUES__REPORTS__KEY_CONCURRENCY=3", "COURIER_QUEUES__REPORTS__KEY_RATE_LIMIT=5/1s"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"emails": 20, "audit": 0, "reports": 3} {
		q := cfg.Queues[name]
		if got := q.options().KeyConcurrency; got != want {
			t.Errorf("%s: key concurrency %d, want %d", name, got, want)
		}
	}
	for name, want := range map[string]worker.RateLimit{"emails": {N: 100, Per: time.Minute}, "audit": {}, "reports": {N: 5, Per: time.Second}} {
		q := cfg.Queues[name]
		if got := q.options().KeyRateLimit; got != want {
			t.Errorf("%s: key rate limit %+v, want %+v", name, got, want)
		}
	}
}

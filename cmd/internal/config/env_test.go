package config

import (
	"strings"
	"testing"
)

// TestEnvWarnings: a COURIER_* variable that sets nothing is warned about,
// with the variable it was likely meant to be; the variables known not to
// be configuration are not.
func TestEnvWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		environ  []string
		warnings []string // each the start of one warning, in order
	}{
		{"one underscore", []string{"COURIER_REDIS_ADDR=x:1"},
			[]string{"COURIER_REDIS_ADDR sets nothing: did you mean COURIER_REDIS__ADDR? (a double underscore separates the levels of a key)"}},
		{"one underscore, key with underscores", []string{"COURIER_REDIS_DIAL_TIMEOUT=1s"},
			[]string{"COURIER_REDIS_DIAL_TIMEOUT sets nothing: did you mean COURIER_REDIS__DIAL_TIMEOUT?"}},
		{"one underscore, queue key", []string{"COURIER_QUEUES_ORDER_EVENTS_MAX_ATTEMPTS=3"},
			[]string{"COURIER_QUEUES_ORDER_EVENTS_MAX_ATTEMPTS sets nothing: did you mean COURIER_QUEUES__ORDER_EVENTS__MAX_ATTEMPTS?"}},
		{"one underscore, handler setting", []string{"COURIER_QUEUES_EMAILS_WEBHOOK_SECRET=s"},
			[]string{"COURIER_QUEUES_EMAILS_WEBHOOK_SECRET sets nothing: did you mean COURIER_QUEUES__EMAILS__WEBHOOK__SECRET?"}},
		{"no key at all", []string{"COURIER_PREFIX=x"},
			[]string{"COURIER_PREFIX sets nothing: it has no double underscore, so it names no key (configuration variables look like COURIER_REDIS__ADDR; the other COURIER_ variables Courier knows: COURIER_API, COURIER_TOKEN, COURIER_TEST_*)"}},
		{"empty", []string{"COURIER_REDIS__ADDR="},
			[]string{"COURIER_REDIS__ADDR is empty, so it sets nothing"}},
		{"a key and a section", []string{"COURIER_REDIS__TLS=x", "COURIER_REDIS__TLS__ENABLED=true"},
			[]string{"COURIER_REDIS__TLS__ENABLED sets nothing: another variable sets a key beneath redis.tls"}},
		{"known variables and others", []string{"COURIER_TEST_REDIS_IMAGE=redis:7", "COURIER_API=http://x", "COURIER_TOKEN=t",
			"PATH=/bin", "REDIS_ADDR=x", "courier_redis_addr=x", "COURIER_REDIS__ADDR=x:1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, _ := LoadFull(Sources{Environ: tt.environ})
			if len(l.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d", l.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.HasPrefix(l.Warnings[i], w) {
					t.Errorf("warning %q, want it to start with %q", l.Warnings[i], w)
				}
			}
		})
	}
	t.Run("kept when the load fails", func(t *testing.T) {
		t.Parallel()
		l, err := LoadFull(Sources{Environ: []string{"COURIER_REDIS_ADDR=x:1", "COURIER_LOG__LEVEL=loud"}})
		if !IsProblem(err) || l.Config != nil || len(l.Warnings) != 1 {
			t.Errorf("LoadFull: %v, config %v, warnings %q; want the problem and the warning", err, l.Config, l.Warnings)
		}
	})
}

// TestSources: every key a layer set is recorded with the last layer that
// set it, a variable by name; keys no layer set are defaults.
func TestSources(t *testing.T) {
	t.Parallel()
	l, err := LoadFull(Sources{
		File: writeFile(t, minimal+`
      headers: {X-A: a}
redis:
  addr: [file:1]
  db: 3
  tls:
    server_name: s
log:
  level: warn
`),
		Environ: []string{"COURIER_LOG__LEVEL=debug", "COURIER_REDIS__TLS=x", "COURIER_QUEUES__EMAILS__WEBHOOK__HEADERS__X_B=b"},
		Flags:   map[string]any{"redis.addr": "flag:1"},
	})
	// redis.tls from the environment is no section: refused, naming the
	// variable; the sources are kept all the same.
	if err == nil || !strings.Contains(err.Error(), `redis.tls: expected a section of keys, got the text "x" (set by COURIER_REDIS__TLS)`) {
		t.Fatalf("LoadFull: %v; want redis.tls refused, naming its variable", err)
	}
	want := map[string]string{
		"queues.emails.handler":             SourceFile,
		"queues.emails.webhook.url":         SourceFile,
		"queues.emails.webhook.headers.X-A": SourceFile,
		"queues.emails.webhook.headers.x_b": "env COURIER_QUEUES__EMAILS__WEBHOOK__HEADERS__X_B",
		"redis.addr":                        SourceFlag,
		"redis.db":                          SourceFile,
		"redis.tls":                         "env COURIER_REDIS__TLS", // hid redis.tls.server_name
		"log.level":                         "env COURIER_LOG__LEVEL",
	}
	for k, v := range want {
		if got := l.Sources[k]; got != v {
			t.Errorf("Sources[%s] = %q, want %q", k, got, v)
		}
	}
	if len(l.Sources) != len(want) {
		t.Errorf("Sources = %v, want only %v", l.Sources, want)
	}
	for key, src := range map[string]string{
		"redis.tls.server_name":    "env COURIER_REDIS__TLS",
		"queues.emails.timeout":    SourceDefault,
		"shutdown.timeout":         SourceDefault,
		"redis.addr[0]":            SourceFlag,
		"queues.emails.webhook.ur": SourceDefault,
	} {
		if got := l.SourceOf(key); got != src {
			t.Errorf("SourceOf(%s) = %q, want %q", key, got, src)
		}
	}
}

// TestNonConfigVariables: the list names the variables the CLI and the
// tests read.
func TestNonConfigVariables(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"COURIER_API", "COURIER_TOKEN", "COURIER_TEST_REDIS_IMAGE", "COURIER_TEST_ANYTHING"} {
		if !nonConfig(v) {
			t.Errorf("%s is not in NonConfigVariables", v)
		}
	}
}

package config

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// TestTracingRedactor: the values of the exporter's headers, from
// tracing.headers or else the OTEL_* variables, are blanked in every form
// a collector may echo; short values and other text are left.
func TestTracingRedactor(t *testing.T) {
	t.Parallel()
	const key = "Key/0123+456789=="
	forms := []string{key, strings.ToUpper(key), url.QueryEscape(key), base64.StdEncoding.EncodeToString([]byte(key))}
	fromConfig := (&Tracing{Headers: map[string]Secret{"authorization": "Bearer " + key, "x-short": "abc"}}).Redactor(func(string) string { return "" })
	fromEnv := (&Tracing{}).Redactor(func(name string) string {
		if name == "OTEL_EXPORTER_OTLP_HEADERS" {
			return "x-short=abc, api-key=" + url.PathEscape(key)
		}
		return ""
	})
	for name, redact := range map[string]func(string) string{"tracing.headers": fromConfig, "OTEL_EXPORTER_OTLP_HEADERS": fromEnv} {
		for _, f := range forms {
			got := redact("401: unknown key " + f + " (abc)")
			if got != "401: unknown key [redacted] (abc)" {
				t.Errorf("%s: %q became %q", name, f, got)
			}
		}
	}
	if got := fromConfig("Bearer " + key); got != "[redacted]" {
		t.Errorf("the whole value: %q", got)
	}
}

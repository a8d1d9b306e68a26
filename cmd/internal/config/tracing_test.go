package config

import (
	"maps"
	"strings"
	"testing"
)

// TestTracingKeys: the tracing section from a file and from the
// environment; the sample ratio as a number of the file or text of a
// variable, unset by default; the headers redacted in courier config
// print.
func TestTracingKeys(t *testing.T) {
	t.Parallel()
	def := Default()
	if def.Tracing.Exporter != "" || def.Tracing.Protocol != "" || def.Tracing.Endpoint != "" {
		t.Errorf("tracing defaults = %+v, want every key empty (the OTEL_* variables decide)", def.Tracing)
	}
	if _, set := def.Tracing.Ratio(); set {
		t.Error("tracing.sample_ratio is set by default")
	}

	l, err := LoadFull(Sources{File: writeFile(t, `
tracing:
  exporter: otlp
  protocol: grpc
  endpoint: https://collector.example:4317
  headers:
    x-api-key: s3cret-key-value
  sample_ratio: 0.25
  service_name: billing-workers
`)})
	if err != nil {
		t.Fatal(err)
	}
	tr := l.Config.Tracing
	if r, set := tr.Ratio(); !set || r != 0.25 {
		t.Errorf("Ratio() = %v, %t; want 0.25, true", r, set)
	}
	if want := map[string]string{"x-api-key": "s3cret-key-value"}; !maps.Equal(tr.HeaderValues(), want) {
		t.Errorf("HeaderValues() = %v, want %v", tr.HeaderValues(), want)
	}
	if tr.Exporter != "otlp" || tr.Protocol != "grpc" || tr.Endpoint != "https://collector.example:4317" || tr.ServiceName != "billing-workers" {
		t.Errorf("tracing = %+v", tr)
	}
	out, err := l.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "s3cret-key-value") {
		t.Errorf("config print shows a tracing header's value:\n%s", out)
	}

	for _, tc := range []struct {
		env  string
		want float64
	}{{"0.5", 0.5}, {"1", 1}, {"0", 0}} {
		cfg, err := Load(Sources{Environ: []string{"COURIER_TRACING__SAMPLE_RATIO=" + tc.env, "COURIER_TRACING__EXPORTER=otlp"}})
		if err != nil {
			t.Fatalf("COURIER_TRACING__SAMPLE_RATIO=%s: %v", tc.env, err)
		}
		if r, set := cfg.Tracing.Ratio(); !set || r != tc.want || cfg.Tracing.Exporter != "otlp" {
			t.Errorf("COURIER_TRACING__SAMPLE_RATIO=%s: Ratio() = %v, %t, exporter %q", tc.env, r, set, cfg.Tracing.Exporter)
		}
	}
}

package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Tracing configures the OpenTelemetry tracing of courier run and courier
// dev (see docs/monitoring.md, "Tracing"): spans of the API's enqueues and of
// every attempt, exported over OTLP. Off by default. A key left empty
// leaves the standard OTEL_* environment variables to decide, as the
// comments say; keys set here win over them.
type Tracing struct {
	// Exporter is none or otlp. Empty: otlp when OTEL_TRACES_EXPORTER
	// says otlp, else none.
	Exporter string `koanf:"exporter"`
	// Protocol is http/protobuf, http/json or grpc. Empty:
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf.
	Protocol string `koanf:"protocol"`
	// Endpoint is the collector's URL, http:// (plain text) or https://
	// (TLS). Over HTTP a URL without a path is sent to /v1/traces, one
	// with a path to that path; over gRPC the path is not used. Empty:
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, then OTEL_EXPORTER_OTLP_ENDPOINT,
	// else the exporter's default, https://localhost:4318 (HTTP) or
	// https://localhost:4317 (gRPC).
	Endpoint string `koanf:"endpoint"`
	// Headers are sent with every export (an API key, say). When set,
	// they replace OTEL_EXPORTER_OTLP_HEADERS and
	// OTEL_EXPORTER_OTLP_TRACES_HEADERS.
	Headers map[string]Secret `koanf:"headers"`
	// SampleRatio is the share of traces recorded, 0 to 1, among those
	// that start here (an enqueue without a caller's trace context, the
	// attempts of a job enqueued untraced); a trace a caller started keeps
	// the caller's decision (parent-based). A number; unset (nil):
	// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, else 1. Read it
	// with Ratio. (Any type, because the decoder knows no fractions: it
	// is checked here.)
	SampleRatio any `koanf:"sample_ratio"`
	// ServiceName is the service.name of the spans. Empty:
	// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES),
	// else "courier".
	ServiceName string `koanf:"service_name"`
}

// Values of the tracing keys.
const (
	TracingExporterNone       = "none"
	TracingExporterOTLP       = "otlp"
	TracingProtocolProtobuf   = "http/protobuf"
	TracingProtocolJSON       = "http/json"
	TracingProtocolGRPC       = "grpc"
	TracingServiceNameDefault = "courier"
)

// TracingProtocols are the values tracing.protocol (and the OTEL_* protocol
// variables it stands for) may take.
func TracingProtocols() []string {
	return []string{TracingProtocolProtobuf, TracingProtocolJSON, TracingProtocolGRPC}
}

// Ratio returns tracing.sample_ratio, and false when it is not set. Call
// it on a loaded configuration: the value is checked there.
func (t *Tracing) Ratio() (float64, bool) {
	r, ok, _ := parseRatio(t.SampleRatio)
	return r, ok
}

// HeaderValues returns tracing.headers with their secrets revealed, for
// the exporter; nil when none is set.
func (t *Tracing) HeaderValues() map[string]string {
	if len(t.Headers) == 0 {
		return nil
	}
	out := make(map[string]string, len(t.Headers))
	for name, v := range t.Headers {
		out[name] = v.Reveal()
	}
	return out
}

// parseRatio reads a sample ratio as the decoder leaves it: a number of
// the YAML file, or text of a variable or flag.
func parseRatio(v any) (float64, bool, error) {
	var r float64
	switch v := v.(type) {
	case nil:
		return 0, false, nil
	case float64:
		r = v
	case int:
		r = float64(v)
	case int64:
		r = float64(v)
	case uint64:
		r = float64(v)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, false, fmt.Errorf("expected a number from 0 to 1, got the text %q", v)
		}
		r = f
	default:
		return 0, false, fmt.Errorf("expected a number from 0 to 1, got %s", kindOf(v))
	}
	if !(r >= 0 && r <= 1) { // NaN too
		return 0, false, fmt.Errorf("must be 0 to 1 (got %v)", r)
	}
	return r, true, nil
}

func (t *Tracing) validate(ps *problems) {
	if !slices.Contains([]string{"", TracingExporterNone, TracingExporterOTLP}, t.Exporter) {
		ps.add("tracing.exporter", "must be none or otlp, or empty for OTEL_TRACES_EXPORTER (got %q)", t.Exporter)
	}
	if t.Protocol != "" && !slices.Contains(TracingProtocols(), t.Protocol) {
		ps.add("tracing.protocol", "must be %s, or empty for OTEL_EXPORTER_OTLP_PROTOCOL (got %q)", strings.Join(TracingProtocols(), ", "), t.Protocol)
	}
	if t.Endpoint != "" {
		if err := checkEndpoint(t.Endpoint); err != nil {
			ps.add("tracing.endpoint", "%v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
		if err := checkExportHeader(name, t.Headers[name].Reveal()); err != nil {
			ps.add("tracing.headers."+name, "%v", err)
		}
	}
	if _, _, err := parseRatio(t.SampleRatio); err != nil {
		ps.add("tracing.sample_ratio", "%v", err)
	}
}

// checkEndpoint checks a collector URL. Its errors never repeat the URL,
// which may hold credentials.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	var ue *url.Error
	switch {
	case errors.As(err, &ue):
		return fmt.Errorf("is not a valid URL: %w", ue.Err)
	case err != nil:
		return errors.New("is not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("must be an http:// (plain text) or https:// URL, such as http://localhost:4318 (got scheme %q)", u.Scheme)
	case u.Hostname() == "":
		return errors.New("has no host")
	case u.User != nil:
		return errors.New("holds user information; send credentials in tracing.headers")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("must not have a query or a fragment")
	}
	return nil
}

// checkExportHeader checks one of tracing.headers: an HTTP token for a
// name, a value without control characters. The value is never shown.
func checkExportHeader(name, value string) error {
	switch {
	case name == "":
		return errors.New("the name is empty")
	case !httpguts.ValidHeaderFieldName(name):
		return errors.New("is not a valid header name")
	case !httpguts.ValidHeaderFieldValue(value):
		return fmt.Errorf("value holds a control character%s", hiddenNote)
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
)

// tracingFlushTimeout bounds the flush of the spans still buffered, the
// last step of the stop order.
const tracingFlushTimeout = 5 * time.Second

// The OTEL_* variables read here; the exporters and the SDK read the
// others themselves (endpoint, headers, certificates, compression,
// timeout, batching, sampler, resource).
const (
	envTracesExporter = "OTEL_TRACES_EXPORTER"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
)

// startTracing builds the TracerProvider of the tracing section and the
// OTEL_* variables (getenv). Off, it returns a nil provider, so that
// worker.Config.TracerProvider stays nil and tracing costs nothing, and a
// flush that does nothing. On, flush exports the spans still buffered and
// stops the exporter, within tracingFlushTimeout, logging what it could
// not send; call it once, after everything that makes spans has stopped.
func startTracing(ctx context.Context, c config.Tracing, getenv func(string) string, log *slog.Logger) (trace.TracerProvider, func(), error) {
	off := func() {}
	on, err := tracingOn(c.Exporter, getenv)
	if err != nil || !on {
		return nil, off, err
	}
	protocol, err := tracingProtocol(c.Protocol, getenv)
	if err != nil {
		return nil, off, err
	}
	exp, err := newSpanExporter(ctx, c, protocol)
	if err != nil {
		return nil, off, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := tracingResource(ctx, c.ServiceName)
	if err != nil {
		// A partial resource still names the service: worth running with.
		log.Warn("tracing: resource incomplete", "err", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	sampler := "OTEL_TRACES_SAMPLER, else parent-based 1"
	if r, set := c.Ratio(); set {
		// Parent-based: a trace its caller started keeps the caller's
		// decision, and a job's attempts follow its enqueue.
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r))))
		sampler = fmt.Sprintf("parent-based %g", r)
	}
	tp := sdktrace.NewTracerProvider(opts...)
	// Export failures would go to the standard logger's unstructured
	// lines; main owns the process, so it may set where they go.
	// A collector that refuses an export may echo the key it got, and
	// the exporter puts its reply in the error: the headers' values are
	// blanked out of every error logged.
	redact := c.Redactor(getenv)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", redact(err.Error())) }))
	log.Info("tracing on", "protocol", protocol, "endpoint", shownEndpoint(c.Endpoint, getenv),
		"service_name", serviceName(res), "sampler", sampler)
	flush := func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
		defer cancel()
		if err := tp.Shutdown(fctx); err != nil {
			log.Warn("tracing: spans not flushed", "err", redact(err.Error()))
		}
	}
	return tp, flush, nil
}

// tracingOn says whether tracing.exporter, or OTEL_TRACES_EXPORTER when
// it is empty, asks for the OTLP exporter.
func tracingOn(exporter string, getenv func(string) string) (bool, error) {
	if exporter != "" {
		return exporter == config.TracingExporterOTLP, nil
	}
	v := strings.TrimSpace(getenv(envTracesExporter))
	if v == "" {
		return false, nil
	}
	on := false
	for name := range strings.SplitSeq(v, ",") {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case config.TracingExporterOTLP:
			on = true
		case config.TracingExporterNone:
		default:
			return false, fmt.Errorf("%s=%q: courier exports traces with otlp only (or none); set tracing.exporter to override the variable", envTracesExporter, v)
		}
	}
	return on, nil
}

// tracingProtocol is tracing.protocol, else the OTEL_* protocol
// variables', else http/protobuf.
func tracingProtocol(protocol string, getenv func(string) string) (string, error) {
	if protocol != "" {
		return protocol, nil
	}
	for _, name := range []string{envTracesProtocol, envProtocol} {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		valid := config.TracingProtocols()
		if !slices.Contains(valid, v) {
			return "", fmt.Errorf("%s=%q: must be %s (or set tracing.protocol)", name, v, strings.Join(valid, ", "))
		}
		return v, nil
	}
	return config.TracingProtocolProtobuf, nil
}

// newSpanExporter is the OTLP exporter of protocol. Options are given only
// for keys set: the exporter reads the OTEL_EXPORTER_OTLP_* variables
// first, and an option overrides its variable.
func newSpanExporter(ctx context.Context, c config.Tracing, protocol string) (sdktrace.SpanExporter, error) {
	headers := c.HeaderValues()
	if protocol == config.TracingProtocolGRPC {
		var opts []otlptracegrpc.Option
		if c.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.Endpoint))
		}
		if headers != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	enc := otlptracehttp.EncodingProtobuf
	if protocol == config.TracingProtocolJSON {
		enc = otlptracehttp.EncodingJSON
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEncoding(enc)}
	if c.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(tracesURL(c.Endpoint)))
	}
	if headers != nil {
		opts = append(opts, otlptracehttp.WithHeaders(headers))
	}
	return otlptracehttp.New(ctx, opts...)
}

// tracesURL is where the HTTP exporter sends to for tracing.endpoint: the
// URL as given, /v1/traces when it has no path (a collector's base URL, as
// OTEL_EXPORTER_OTLP_ENDPOINT is read). The endpoint was validated.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || strings.Trim(u.Path, "/") != "" {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

// tracingResource describes this process to the trace backend:
// service.name (tracing.service_name, else OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES, else "courier"), service.version, the host,
// the SDK. Later options win.
func tracingResource(ctx context.Context, name string) (*resource.Resource, error) {
	opts := []resource.Option{
		resource.WithAttributes(semconv.ServiceName(config.TracingServiceNameDefault), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithFromEnv(),
	}
	if name != "" {
		opts = append(opts, resource.WithAttributes(semconv.ServiceName(name)))
	}
	return resource.New(ctx, opts...)
}

func serviceName(r *resource.Resource) string {
	if r == nil {
		return ""
	}
	v, _ := r.Set().Value(semconv.ServiceNameKey)
	return v.AsString()
}

// shownEndpoint names where spans go, for the start-up log: the scheme,
// host and path only, never user information or a query.
func shownEndpoint(endpoint string, getenv func(string) string) string {
	from := ""
	if endpoint == "" {
		for _, name := range []string{envTracesEndpoint, envEndpoint} {
			if endpoint = getenv(name); endpoint != "" {
				from = " (" + name + ")"
				break
			}
		}
	}
	if endpoint == "" {
		return "the exporter's default (https://localhost)"
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "an invalid URL" + from
	}
	return u.Scheme + "://" + u.Host + u.Path + from
}

// osTracing is startTracing with the process's environment.
func osTracing(ctx context.Context, c config.Tracing, log *slog.Logger) (trace.TracerProvider, func(), error) {
	return startTracing(ctx, c, os.Getenv, log)
}

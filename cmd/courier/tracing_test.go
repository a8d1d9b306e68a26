package main

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/internal/testkit"
)

// otlpReceiver is an OTLP/HTTP collector of a test's own: it decodes each
// ExportTraceServiceRequest and keeps its spans.
type otlpReceiver struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string // service.name of each batch's resource
	encoding []string // Content-Encoding of each request
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" {
		r.t.Errorf("OTLP receiver: %s %s (%s), want POST /v1/traces of application/x-protobuf", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	body := io.Reader(req.Body)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	var msg coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(data, &msg)
	}
	if err != nil {
		r.t.Errorf("OTLP receiver: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.encoding = append(r.encoding, req.Header.Get("Content-Encoding"))
	for _, rs := range msg.GetResourceSpans() {
		r.services = append(r.services, attrString(rs.GetResource().GetAttributes(), "service.name"))
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// got returns the spans received so far, the resources' service names
// and the requests' encodings.
func (r *otlpReceiver) got() (spans []*tracepb.Span, services, encodings []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans), slices.Clone(r.services), slices.Clone(r.encoding)
}

func attrString(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			if v, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_IntValue); ok {
				return strconv.FormatInt(v.IntValue, 10)
			}
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// flakyHook is a webhook receiver that answers 500 to the first request
// and 200 to the others, keeping the traceparent of each attempt.
type flakyHook struct {
	srv *httptest.Server

	mu          sync.Mutex
	traceparent map[int]string // attempt → header
}

func newFlakyHook(t *testing.T) *flakyHook {
	h := &flakyHook{traceparent: map[int]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		attempt, _ := strconv.Atoi(req.Header.Get("Courier-Attempt"))
		h.mu.Lock()
		h.traceparent[attempt] = req.Header.Get("traceparent")
		first := len(h.traceparent) == 1
		h.mu.Unlock()
		if first {
			http.Error(w, "not yet", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *flakyHook) seen() map[int]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.traceparent)
}

// TestRunTracesAJob: a job enqueued through the API by a traced caller,
// failed once by its webhook and then delivered, is one trace in the
// collector: the caller's span, the API's producer span "send hooks"
// under it, and the two attempts' consumer spans "process hooks" under
// that, the failed one in error; the webhook got each attempt's span as
// its traceparent. The batch processor's delay is an hour, so the spans
// arrive through the flush that ends the stop order; the compression
// comes from OTEL_EXPORTER_OTLP_COMPRESSION, which the exporter reads.
func TestRunTracesAJob(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	collector, hook := newOTLPReceiver(t), newFlakyHook(t)
	cfg := writeConfig(t, fmt.Sprintf(`
redis: {addr: [%q], prefix: %s}
http: {addr: 127.0.0.1:0}
admin:
  tokens:
    - {name: shop, token: %s, role: producer}
queues:
  hooks:
    handler: webhook
    backoff: {steps: [10ms]}
    webhook:
      url: %s/hook
      allow_networks: [127.0.0.0/8]
tracing:
  exporter: otlp
  protocol: http/protobuf
  endpoint: %s
  service_name: courier-e2e
`, addr, prefix, testProducerToken, hook.srv.URL, collector.srv.URL))
	daemon := startCourier(t, []string{"OTEL_BSP_SCHEDULE_DELAY=3600000", "OTEL_EXPORTER_OTLP_COMPRESSION=gzip"},
		"run", "--config", cfg)
	base := "http://" + daemon.waitOutput(httpAddrRE, 20*time.Second)
	daemon.waitOutput(regexp.MustCompile(`msg="tracing on" protocol=http/protobuf endpoint=http://127\.0\.0\.1:\d+ service_name=courier-e2e`), 5*time.Second)
	daemon.waitOutput(regexp.MustCompile(`msg="worker pool started"`), 20*time.Second) // the API has its client

	// The caller's trace, chosen here.
	const traceID, callerSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/v1/queues/hooks/jobs", strings.NewReader(`{"id": "traced", "payload": {"n": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testProducerToken)
	req.Header.Set("traceparent", "00-"+traceID+"-"+callerSpan+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("enqueue: status %d, want 201", resp.StatusCode)
	}
	testkit.EventuallyState(t, 20*time.Second, func() (bool, string) {
		n := len(hook.seen())
		return n >= 2, fmt.Sprintf("the webhook got %d attempts, want 2", n)
	})
	if spans, _, _ := collector.got(); len(spans) != 0 {
		t.Errorf("%d spans exported before the stop; the batch delay is an hour", len(spans))
	}
	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}

	spans, services, encodings := collector.got()
	for _, s := range spans {
		if got := hex.EncodeToString(s.GetTraceId()); got != traceID {
			t.Errorf("span %q is in trace %s, want the caller's %s", s.GetName(), got, traceID)
		}
	}
	if !slices.Contains(services, "courier-e2e") || !slices.Contains(encodings, "gzip") {
		t.Errorf("resources' service.name %v, encodings %v; want courier-e2e, gzip", services, encodings)
	}
	var send *tracepb.Span
	var attempts []*tracepb.Span
	for _, s := range spans {
		switch s.GetName() {
		case "send hooks":
			send = s
		case "process hooks":
			attempts = append(attempts, s)
		default:
			t.Errorf("unexpected span %q", s.GetName())
		}
	}
	if send == nil || len(attempts) != 2 {
		t.Fatalf("got a send span: %t, %d process spans; want one and 2", send != nil, len(attempts))
	}
	sendID := hex.EncodeToString(send.GetSpanId())
	if send.GetKind() != tracepb.Span_SPAN_KIND_PRODUCER || hex.EncodeToString(send.GetParentSpanId()) != callerSpan ||
		attrString(send.GetAttributes(), "messaging.message.id") != "traced" || attrString(send.GetAttributes(), "messaging.destination.name") != "hooks" {
		t.Errorf("send span: kind %s, parent %x, attributes %v; want a producer under the caller's span %s, for job traced of queue hooks",
			send.GetKind(), send.GetParentSpanId(), send.GetAttributes(), callerSpan)
	}
	slices.SortFunc(attempts, func(a, b *tracepb.Span) int {
		return strings.Compare(attrString(a.GetAttributes(), "courier.job.attempt"), attrString(b.GetAttributes(), "courier.job.attempt"))
	})
	webhookSaw := hook.seen()
	for i, want := range []struct {
		outcome string
		status  tracepb.Status_StatusCode
	}{{"retry", tracepb.Status_STATUS_CODE_ERROR}, {"success", tracepb.Status_STATUS_CODE_UNSET}} {
		a, attempt := attempts[i], i+1
		if a.GetKind() != tracepb.Span_SPAN_KIND_CONSUMER || hex.EncodeToString(a.GetParentSpanId()) != sendID {
			t.Errorf("attempt %d: kind %s, parent %x; want a consumer under the send span %s", attempt, a.GetKind(), a.GetParentSpanId(), sendID)
		}
		if got := attrString(a.GetAttributes(), "courier.job.attempt"); got != strconv.Itoa(attempt) {
			t.Errorf("attempt %d: courier.job.attempt = %s", attempt, got)
		}
		if got := attrString(a.GetAttributes(), "courier.job.outcome"); got != want.outcome || a.GetStatus().GetCode() != want.status {
			t.Errorf("attempt %d: outcome %q, status %s (%q); want %q, %s", attempt, got, a.GetStatus().GetCode(), a.GetStatus().GetMessage(), want.outcome, want.status)
		}
		if got, wantTP := webhookSaw[attempt], "00-"+traceID+"-"+hex.EncodeToString(a.GetSpanId())+"-01"; got != wantTP {
			t.Errorf("attempt %d: the webhook got traceparent %q, want the attempt's span: %q", attempt, got, wantTP)
		}
	}
	if msg := attempts[0].GetStatus().GetMessage(); !strings.Contains(msg, "500") {
		t.Errorf("the failed attempt's status message %q does not give the webhook's status 500", msg)
	}
}

// grpcCollector is an OTLP/gRPC collector of a test's own.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []string // names
	md    []string // the x-api-key metadata of each export
}

func (c *grpcCollector) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.md = append(c.md, md.Get("x-api-key")...)
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, attrString(rs.GetResource().GetAttributes(), "service.name")+"/"+s.GetName())
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// TestTracingOverGRPC: tracing.protocol grpc exports to an http://
// endpoint in plain text, with tracing.headers as metadata, and the flush
// sends what was buffered.
func TestTracingOverGRPC(t *testing.T) {
	t.Parallel()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := &grpcCollector{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, col)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	c := config.Tracing{Exporter: "otlp", Protocol: "grpc", Endpoint: "http://" + ln.Addr().String(),
		Headers: map[string]config.Secret{"x-api-key": "k3y"}, ServiceName: "grpc-test", SampleRatio: 1.0}
	tp, flush, err := startTracing(t.Context(), c, func(string) string { return "" }, slog.New(slog.DiscardHandler))
	if err != nil || tp == nil {
		t.Fatalf("startTracing: %v, %v", tp, err)
	}
	_, span := tp.Tracer("test").Start(t.Context(), "one")
	span.End()
	flush()
	col.mu.Lock()
	defer col.mu.Unlock()
	if !slices.Equal(col.spans, []string{"grpc-test/one"}) || !slices.Equal(col.md, []string{"k3y"}) {
		t.Errorf("the collector got spans %v with x-api-key %v; want [grpc-test/one], [k3y]", col.spans, col.md)
	}
}

// TestTracingSettings: which exporter and protocol the keys and the
// OTEL_* variables choose, the keys winning; where an endpoint sends.
func TestTracingSettings(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(name string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == name {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		exporter string
		getenv   func(string) string
		on       bool
		err      string
	}{
		{"", env(), false, ""},
		{"", env("OTEL_TRACES_EXPORTER", "otlp"), true, ""},
		{"", env("OTEL_TRACES_EXPORTER", "none"), false, ""},
		{"", env("OTEL_TRACES_EXPORTER", "zipkin"), false, `OTEL_TRACES_EXPORTER="zipkin": courier exports traces with otlp only`},
		{"none", env("OTEL_TRACES_EXPORTER", "otlp"), false, ""},
		{"otlp", env("OTEL_TRACES_EXPORTER", "zipkin"), true, ""},
	} {
		on, err := tracingOn(tc.exporter, tc.getenv)
		if on != tc.on || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("tracingOn(%q, %v) = %t, %v; want %t, %q", tc.exporter, tc.getenv("OTEL_TRACES_EXPORTER"), on, err, tc.on, tc.err)
		}
	}
	for _, tc := range []struct {
		protocol string
		getenv   func(string) string
		want     string
		err      string
	}{
		{"", env(), "http/protobuf", ""},
		{"", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), "grpc", ""},
		{"", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"), "http/json", ""},
		{"http/protobuf", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), "http/protobuf", ""},
		{"", env("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"), "", `OTEL_EXPORTER_OTLP_PROTOCOL="thrift": must be http/protobuf, http/json, grpc`},
	} {
		got, err := tracingProtocol(tc.protocol, tc.getenv)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("tracingProtocol(%q) = %q, %v; want %q, %q", tc.protocol, got, err, tc.want, tc.err)
		}
	}
	for endpoint, want := range map[string]string{
		"http://collector:4318":           "http://collector:4318/v1/traces",
		"http://collector:4318/":          "http://collector:4318/v1/traces",
		"https://otlp.example/v1/traces":  "https://otlp.example/v1/traces",
		"https://otlp.example/api/traces": "https://otlp.example/api/traces",
	} {
		if got := tracesURL(endpoint); got != want {
			t.Errorf("tracesURL(%q) = %q, want %q", endpoint, got, want)
		}
	}
}

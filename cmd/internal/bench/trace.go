package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// tracing is throughput --trace: a real OpenTelemetry SDK TracerProvider
// (every span sampled, the SDK's batch span processor with its defaults,
// which drops spans when its queue is full) exporting over OTLP/HTTP to a
// receiver this run serves on a loopback port, so that the figures hold
// the whole cost of tracing in one process: making the spans, batching,
// encoding and sending them.
type tracing struct {
	provider *sdktrace.TracerProvider
	ended    endCounter
	recv     *otlpReceiver
	srv      *http.Server
	served   chan error
	once     sync.Once
	err      error         // close's
	flush    time.Duration // what close took to shut the provider down
}

// startTracing starts the receiver and the provider exporting to it; stop
// them with (*tracing).close.
func startTracing(ctx context.Context) (*tracing, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("--trace: listen for OTLP: %w", err)
	}
	t := &tracing{recv: &otlpReceiver{}, served: make(chan error, 1)}
	t.srv = &http.Server{Handler: t.recv, ReadHeaderTimeout: 10 * time.Second}
	go func() { t.served <- t.srv.Serve(ln) }()
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL("http://"+ln.Addr().String()+"/v1/traces"),
		// Explicit, so that OTEL_EXPORTER_OTLP_* in the environment cannot
		// change what the receiver reads.
		otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf),
		otlptracehttp.WithCompression(otlptracehttp.NoCompression))
	if err != nil {
		_ = t.srv.Close()
		return nil, fmt.Errorf("--trace: OTLP exporter: %w", err)
	}
	t.provider = sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(&t.ended),
		sdktrace.WithBatcher(exp))
	return t, nil
}

// close flushes the provider (every span ended so far is exported or
// dropped), then stops the receiver; calls after the first return the
// first's error. It works after ctx has ended, too, so that a failed run
// leaves nothing behind.
func (t *tracing) close(ctx context.Context) error {
	t.once.Do(func() { t.err = t.shutdown(ctx) })
	return t.err
}

func (t *tracing) shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := t.provider.Shutdown(ctx)
	t.flush = time.Since(start)
	if err != nil {
		err = fmt.Errorf("--trace: flush the spans: %w", err)
	}
	if serr := t.srv.Shutdown(ctx); serr != nil {
		err = errors.Join(err, fmt.Errorf("--trace: stop the OTLP receiver: %w", serr))
	}
	if serr := <-t.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("--trace: OTLP receiver: %w", serr))
	}
	return err
}

// figures are the key=value pairs --trace adds to throughput's line, for
// n jobs; call them after close.
func (t *tracing) figures(n int) string {
	return fmt.Sprintf(" trace=true spans_ended=%d spans_exported=%d otlp_requests=%d otlp_bytes_per_job=%.0f otlp_bad_requests=%d trace_flush_ms=%s",
		t.ended.n.Load(), t.recv.spans.Load(), t.recv.requests.Load(), float64(t.recv.bytes.Load())/float64(n),
		t.recv.bad.Load(), ms(t.flush))
}

// endCounter is a span processor that counts the spans ended, to compare
// with those the receiver got: the batch processor drops the rest.
type endCounter struct {
	n atomic.Int64
}

// OnStart implements sdktrace.SpanProcessor.
func (*endCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd implements sdktrace.SpanProcessor.
func (c *endCounter) OnEnd(sdktrace.ReadOnlySpan) { c.n.Add(1) }

// Shutdown implements sdktrace.SpanProcessor.
func (*endCounter) Shutdown(context.Context) error { return nil }

// ForceFlush implements sdktrace.SpanProcessor.
func (*endCounter) ForceFlush(context.Context) error { return nil }

var _ sdktrace.SpanProcessor = (*endCounter)(nil)

// otlpReceiver serves POST /v1/traces as an OTLP/HTTP collector would,
// and keeps nothing: it counts the requests, their bytes and their spans.
type otlpReceiver struct {
	requests, bytes, spans, bad atomic.Int64
}

// maxOTLPBody bounds a request body the receiver reads (the exporter
// sends batches of 512 spans, far less).
const maxOTLPBody = 64 << 20

// ServeHTTP implements http.Handler.
func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxOTLPBody))
	r.requests.Add(1)
	r.bytes.Add(int64(len(body)))
	if err != nil {
		r.bad.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n, err := countSpans(body)
	if err != nil {
		// Answered 400, which the exporter does not send again.
		r.bad.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.spans.Add(n)
	// An empty body is an ExportTraceServiceResponse without a partial
	// success.
	w.WriteHeader(http.StatusOK)
}

// countSpans counts the spans of an OTLP ExportTraceServiceRequest without
// decoding them: its resource_spans (field 1), their scope_spans (2), and
// the spans (2) of these.
func countSpans(b []byte) (int64, error) {
	var n int64
	err := eachMessage(b, 1, func(rs []byte) error {
		return eachMessage(rs, 2, func(ss []byte) error {
			return eachMessage(ss, 2, func([]byte) error { n++; return nil })
		})
	})
	return n, err
}

// eachMessage calls f with every length-delimited field num of the
// protobuf message b, and skips the other fields.
func eachMessage(b []byte, num protowire.Number, f func([]byte) error) error {
	for len(b) > 0 {
		fnum, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return fmt.Errorf("OTLP request: %w", protowire.ParseError(l))
		}
		b = b[l:]
		if fnum == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return fmt.Errorf("OTLP request: %w", protowire.ParseError(l))
			}
			if err := f(v); err != nil {
				return err
			}
			b = b[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(fnum, typ, b); l < 0 {
			return fmt.Errorf("OTLP request: %w", protowire.ParseError(l))
		}
		b = b[l:]
	}
	return nil
}

package bench

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTracing: the spans of a real SDK provider reach the bench's own
// OTLP receiver, which counts each of them once, in batches; close
// flushes them, and a second close returns the same.
func TestTracing(t *testing.T) {
	t.Parallel()
	tr, err := startTracing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const spans = 1500 // three batches of 512 at most, in the SDK's queue of 2048
	tracer := tr.provider.Tracer("bench-test")
	for range spans {
		_, span := tracer.Start(t.Context(), "job")
		span.End()
	}
	if err := tr.close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := tr.close(t.Context()); err != nil {
		t.Errorf("second close: %v", err)
	}
	if got := tr.ended.n.Load(); got != spans {
		t.Errorf("spans ended %d; want %d", got, spans)
	}
	if got := tr.recv.spans.Load(); got != spans {
		t.Errorf("spans exported %d; want %d", got, spans)
	}
	if req, bad := tr.recv.requests.Load(), tr.recv.bad.Load(); req < 3 || bad != 0 || tr.recv.bytes.Load() < spans*20 {
		t.Errorf("%d requests (%d bad), %d bytes; want at least 3 requests, none bad, 20 bytes a span", req, bad, tr.recv.bytes.Load())
	}
	kv := parseFigures(t, "mode=throughput"+tr.figures(spans)+"\n")
	if kv["trace"] != "true" || kv["spans_exported"] != "1500" || kv["spans_ended"] != "1500" {
		t.Errorf("figures %v", kv)
	}
	number(t, kv, "otlp_bytes_per_job")
	number(t, kv, "trace_flush_ms")
}

// TestOTLPReceiver: only POST /v1/traces is served, and a body that is not
// protobuf is refused and counted as bad.
func TestOTLPReceiver(t *testing.T) {
	t.Parallel()
	r := &otlpReceiver{}
	for _, tt := range []struct {
		method, path, body string
		status             int
	}{
		{http.MethodGet, "/v1/traces", "", http.StatusNotFound},
		{http.MethodPost, "/v1/metrics", "", http.StatusNotFound},
		{http.MethodPost, "/v1/traces", "", http.StatusOK},                   // no spans
		{http.MethodPost, "/v1/traces", "\x0a\x05ab", http.StatusBadRequest}, // a field longer than the body
	} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), tt.method, tt.path, strings.NewReader(tt.body)))
		if w.Code != tt.status {
			t.Errorf("%s %s %q: %d; want %d", tt.method, tt.path, tt.body, w.Code, tt.status)
		}
	}
	if r.requests.Load() != 2 || r.bad.Load() != 1 || r.spans.Load() != 0 {
		t.Errorf("requests %d, bad %d, spans %d; want 2, 1, 0", r.requests.Load(), r.bad.Load(), r.spans.Load())
	}
}

// TestCountSpans: spans are counted through resource_spans and
// scope_spans, and other fields are skipped.
func TestCountSpans(t *testing.T) {
	t.Parallel()
	// A span (field 2 of ScopeSpans) of 2 bytes, twice, beside a scope
	// (field 1) and a schema URL (field 3).
	scope := "\x0a\x00" + "\x12\x02\x08\x01" + "\x12\x02\x08\x02" + "\x1a\x01x"
	resource := "\x0a\x00" + "\x12" + string(rune(len(scope))) + scope
	req := "\x0a" + string(rune(len(resource))) + resource + "\x0a" + string(rune(len(resource))) + resource
	n, err := countSpans([]byte(req))
	if err != nil || n != 4 {
		t.Errorf("countSpans: %d, %v; want 4", n, err)
	}
}

package webhook_test

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/seed-53d105c9/courier/handlers/webhook"
)

// TestTraceparent: the receiver gets the W3C trace context of the span in
// the handler's context (the attempt's, when the daemon traces), replacing
// a traceparent of the settings' headers, and no trace header when the
// context has no span.
func TestTraceparent(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	const want = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name    string
		ctx     func(context.Context) context.Context
		headers map[string]string
		want    string
	}{
		{"span in context", func(ctx context.Context) context.Context { return trace.ContextWithSpanContext(ctx, sc) }, nil, want},
		{"replaces the settings' traceparent", func(ctx context.Context) context.Context { return trace.ContextWithSpanContext(ctx, sc) },
			map[string]string{"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}, want},
		{"no span", func(ctx context.Context) context.Context { return ctx }, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, status(http.StatusNoContent))
			h := newLocalHandler(t, webhook.Settings{URL: rc.srv.URL + "/hook", Headers: tt.headers})
			if err := h.Handle(tt.ctx(t.Context()), newJob(`{}`)); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			reqs := rc.requests()
			if len(reqs) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(reqs))
			}
			if got := reqs[0].header.Values("Traceparent"); tt.want == "" && len(got) != 0 || tt.want != "" && (len(got) != 1 || got[0] != tt.want) {
				t.Errorf("traceparent = %q, want %q", got, tt.want)
			}
			if got := reqs[0].header.Get("Tracestate"); got != "" {
				t.Errorf("tracestate = %q, want none (the span has no trace state)", got)
			}
		})
	}
}

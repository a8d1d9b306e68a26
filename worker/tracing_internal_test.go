package worker

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestTracingOffCostsNothing: without a TracerProvider the tracer is nil,
// and its seams allocate nothing and leave the headers alone.
// Not parallel: AllocsPerRun refuses to run beside other tests.
func TestTracingOffCostsNothing(t *testing.T) {
	tr := newTracer(nil)
	if tr != nil {
		t.Fatal("newTracer(nil) is not nil")
	}
	ctx := t.Context()
	own := map[string]string{"a": "b"}
	specs := []JobSpec{{Queue: "q", Headers: own}}
	jobs := []store.NewJob{{ID: "j", Headers: own}}
	job := &Job{ID: "j", Queue: "q", Attempt: 1, Headers: own}
	boom := errors.New("boom")
	allocs := testing.AllocsPerRun(100, func() {
		_, sent := tr.send(ctx, specs, jobs)
		sent(nil, nil)
		_, processed := tr.process(ctx, job)
		processed(pool.Outcome{Kind: pool.Retry}, boom)
	})
	if allocs != 0 {
		t.Errorf("the nil tracer allocates %.0f times per enqueue and attempt, want 0", allocs)
	}
	if len(jobs[0].Headers) != 1 {
		t.Errorf("the nil tracer changed the headers: %v", jobs[0].Headers)
	}
}

// TestRoomFor: the trace context fits in headers that passed validation
// only within MaxHeaders and MaxHeadersSize; a name it shares with the
// job's own headers replaces theirs.
func TestRoomFor(t *testing.T) {
	t.Parallel()
	tp := map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} // 11 + 55 bytes
	many := func(n int) map[string]string {
		m := make(map[string]string, n)
		for i := range n {
			m[fmt.Sprintf("h%02d", i)] = "v"
		}
		return m
	}
	big := map[string]string{} // 8 × (1 + 1,015) = 8,128 bytes: 64 to spare
	for i := range 8 {
		big[fmt.Sprint(i)] = strings.Repeat("v", 1015)
	}
	lessBig := maps.Clone(big)
	lessBig["0"] = strings.Repeat("v", 1013) // 66 to spare
	replaced := many(MaxHeaders - 1)
	replaced["traceparent"] = "x"
	tests := []struct {
		name string
		h    map[string]string
		add  map[string]string
		ok   bool
	}{
		{"no headers", nil, tp, true},
		{"31 headers", many(MaxHeaders - 1), tp, true},
		{"32 headers", many(MaxHeaders), tp, false},
		{"32 headers, one a traceparent", replaced, tp, true},
		{"64 bytes to spare", big, tp, false},
		{"66 bytes to spare", lessBig, tp, true},
		{"value over the limit", nil, map[string]string{"tracestate": strings.Repeat("k", MaxHeaderValueLen+1)}, false},
	}
	for _, tt := range tests {
		if why := roomFor(tt.h, tt.add); (why == "") != tt.ok {
			t.Errorf("%s: fits = %t (%s), want %t", tt.name, why == "", why, tt.ok)
		}
	}
}

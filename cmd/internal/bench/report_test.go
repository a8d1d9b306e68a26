package bench

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestReportJSON: --json prints the figures of the key=value line as one
// JSON object, numbers as numbers, a value with spaces kept whole.
func TestReportJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	line := "mode=throughput n=100000 enqueue_per_s=126851 redis_cpu_us_per_job=20.63 rate=100 per 1s lag=1e-05 note=NaN"
	if err := report(&buf, line, true); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	want := map[string]any{"mode": "throughput", "n": 100000.0, "enqueue_per_s": 126851.0, "redis_cpu_us_per_job": 20.63,
		"rate": "100 per 1s", "lag": 1e-05, "note": "NaN"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v; want %#v (all: %s)", k, got[k], v, buf.String())
		}
	}
	buf.Reset()
	if err := report(&buf, line, false); err != nil || buf.String() != line+"\n" {
		t.Errorf("without --json: %q, %v; want the line", buf.String(), err)
	}
}

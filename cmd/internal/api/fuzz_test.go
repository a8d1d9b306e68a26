package api

import (
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// FuzzDecode feeds request bodies to the decoder of single jobs (batch
// false) and of batches (batch true). It must never panic; a refusal is a
// known 4xx code naming a field; an accepted batch holds 1 to MaxBatch
// jobs, none of which names its queue. The job rules are the library's
// (TestEnqueueParity in cmd/courier holds the API to them). The seed
// corpus is in testdata/fuzz/FuzzDecode; make fuzz runs it for a minute.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"id": "a", "payload": {"x": [1, 2.5, "s", null, true]}, "delay": "90s", "max_attempts": 3, "timeout": "1m"}`,
		`{"payload_base64": "AAEC", "run_at": "2026-01-01T00:00:00Z"}`,
		`{"jobs": [{}, {"id": "b", "delay": "1h"}]}`,
		`{"jobs": [{"payload": "x"}], "extra": 1}`,
		`{"id": 1}`,
		`{"delay": "-1s"}`,
		`[`,
		`{"id": "a", "id": "a"}`,
		`{"payload": "\u00e9\ud83d\ude00"}`,
		`{"priority": "high", "unique_key": "k", "unique_for": "1h", "unique_after_finish": true}`,
		`{"jobs": [{"priority": "LOW", "unique_key": "k"}, {"unique_for": "1s"}, {"unique_after_finish": false}]}`,
		`{"headers": {"tenant": "a", "x.y": "b=c"}}`,
		`{"key": "acme", "jobs": [{"key": "tenant/42"}, {"key": ""}, {"key": 5}]}`,
		`{"headers": {"a": 1, "a": "2"}}`,
		`{"jobs": [{"headers": {}}, {"headers": null}, {"headers": []}]}`,
	} {
		f.Add(false, []byte(seed))
		f.Add(true, []byte(seed))
	}
	limits, err := Limits{MaxPayloadBytes: 64, MaxBatch: 5}.withDefaults()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, batch bool, body []byte) {
		var specs []worker.JobSpec
		var e *Error
		if batch {
			specs, e = decodeBatch(body, limits)
		} else {
			var spec worker.JobSpec
			spec, e = decodeJob(body, limits)
			specs = []worker.JobSpec{spec}
		}
		if e != nil {
			if s := e.Code.Status(); s < 400 || s > 499 || !slices.Contains(wire.Codes(), e.Code) {
				t.Fatalf("refusal %+v has status %d", e, s)
			}
			if e.Field == "" || e.Message == "" || !utf8.ValidString(e.Message) {
				t.Fatalf("refusal %+v names no field or has no readable message", e)
			}
			return
		}
		if batch && (len(specs) < 1 || len(specs) > limits.MaxBatch) {
			t.Fatalf("accepted a batch of %d", len(specs))
		}
		for _, s := range specs {
			if s.Queue != "" {
				t.Fatalf("the body set the queue %q", s.Queue)
			}
		}
	})
}

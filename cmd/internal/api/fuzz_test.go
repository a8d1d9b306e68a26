package api

import (
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// FuzzDecode feeds request bodies to the decoder of single jobs (batch
// false) and of batches (batch true). It must never panic; a refusal is a
// known 4xx code naming a field; an accepted job is within every limit, so
// the worker's own checks would accept it too (but for its headers, whose
// names, values and sizes only the worker checks: the decoder takes any
// object of strings). The seed corpus is in
// testdata/fuzz/FuzzDecode; make fuzz runs it for a minute.
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
		`{"headers": {"a": 1, "a": "2"}}`,
		`{"jobs": [{"headers": {}}, {"headers": null}, {"headers": []}]}`,
	} {
		f.Add(false, []byte(seed))
		f.Add(true, []byte(seed))
	}
	limits, err := Limits{MaxPayloadBytes: 64, MaxBatch: 5, MaxScheduleAhead: time.Hour}.withDefaults()
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, batch bool, body []byte) {
		var specs []worker.JobSpec
		var e *Error
		if batch {
			specs, e = decodeBatch(body, limits, now)
		} else {
			var spec worker.JobSpec
			spec, e = decodeJob(body, limits, now)
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
			switch {
			case s.ID != "" && worker.ValidateID(s.ID) != nil:
				t.Fatalf("accepted id %q", s.ID)
			case len(s.Payload) > limits.MaxPayloadBytes:
				t.Fatalf("accepted a payload of %d bytes", len(s.Payload))
			case s.Delay < 0 || s.Delay > limits.MaxScheduleAhead:
				t.Fatalf("accepted delay %s", s.Delay)
			case !s.RunAt.IsZero() && (s.Delay != 0 || s.RunAt.UnixMilli() < 0 || s.RunAt.After(now.Add(limits.MaxScheduleAhead))):
				t.Fatalf("accepted run_at %s with delay %s", s.RunAt, s.Delay)
			case s.MaxAttempts < 0 || s.MaxAttempts > MaxAttemptsLimit:
				t.Fatalf("accepted max_attempts %d", s.MaxAttempts)
			case s.Timeout != 0 && (s.Timeout < time.Millisecond || s.Timeout > MaxTimeout):
				t.Fatalf("accepted timeout %s", s.Timeout)
			case s.Priority < worker.PriorityLow || s.Priority > worker.PriorityHigh:
				t.Fatalf("accepted priority %d", s.Priority)
			case s.UniqueKey != "" && worker.ValidateID(s.UniqueKey) != nil:
				t.Fatalf("accepted unique_key %q", s.UniqueKey)
			case s.UniqueFor != 0 && (s.UniqueKey == "" || s.UniqueFor < time.Millisecond || s.UniqueFor > worker.MaxUniqueFor):
				t.Fatalf("accepted unique_for %s with unique_key %q", s.UniqueFor, s.UniqueKey)
			case s.UniqueAfterFinish && s.UniqueFor == 0:
				t.Fatalf("accepted unique_after_finish without unique_for")
			case s.Queue != "":
				t.Fatalf("the body set the queue %q", s.Queue)
			}
		}
	})
}

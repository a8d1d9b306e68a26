package api

import (
	"strings"
	"testing"
)

// TestDecodePayload: a JSON payload is stored compact, with the white
// space inside its strings kept.
func TestDecodePayload(t *testing.T) {
	t.Parallel()
	l, err := Limits{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		`{"payload": {"a": "x y", "b": [1, 2]}}`: `{"a":"x y","b":[1,2]}`,
		`{"payload":{"a":"x\ty"}}`:               `{"a":"x\ty"}`,
		`{"payload": "  "}`:                      `"  "`,
		`{"payload": 1e3}`:                       `1e3`,
		`{"payload": "<&>"}`:                     `"<&>"`,
	} {
		spec, e := decodeJob([]byte(body), l)
		if e != nil || string(spec.Payload) != want {
			t.Errorf("%s: payload %q (%v), want %q", body, spec.Payload, e, want)
		}
	}
}

// BenchmarkDecodeBatch decodes a batch of 1,000 jobs with 100-byte
// payloads, as courier bench --mode api sends.
func BenchmarkDecodeBatch(b *testing.B) {
	item := `{"payload":"` + strings.Repeat("x", 98) + `"}`
	body := []byte(`{"jobs":[` + strings.TrimSuffix(strings.Repeat(item+",", 1000), ",") + `]}`)
	l, err := Limits{}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := decodeBatch(body, l); err != nil {
			b.Fatal(err)
		}
	}
}

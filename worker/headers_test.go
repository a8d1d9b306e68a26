package worker_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

func TestHeadersValidation(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range worker.MaxHeaders + 1 {
		many[fmt.Sprintf("h%02d", i)] = "v"
	}
	big := map[string]string{}
	for i := range 9 {
		big[fmt.Sprintf("h%d", i)] = strings.Repeat("v", 1000)
	}
	tests := []struct {
		name    string
		headers map[string]string
		field   string // "" = valid
	}{
		{"none", nil, ""},
		{"trace context", map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "congo=t61rcWkgMzE"}, ""},
		{"empty value", map[string]string{"x-empty": ""}, ""},
		{"unicode value", map[string]string{"x-name": "Zoë ✓"}, ""},
		{"upper case name", map[string]string{"X-Tenant": "a"}, `Headers["X-Tenant"]`},
		{"space in name", map[string]string{"x tenant": "a"}, `Headers["x tenant"]`},
		{"equals in name", map[string]string{"a=b": "a"}, `Headers["a=b"]`},
		{"empty name", map[string]string{"": "a"}, `Headers[""]`},
		{"long name", map[string]string{strings.Repeat("n", 65): "a"}, `Headers["` + strings.Repeat("n", 64) + `"…]`},
		{"newline in value", map[string]string{"x": "a\nb"}, `Headers["x"]`},
		{"long value", map[string]string{"x": strings.Repeat("v", 1025)}, `Headers["x"]`},
		{"bad utf-8", map[string]string{"x": "\xff"}, `Headers["x"]`},
		{"too many", many, "Headers"},
		{"too big", big, "Headers"},
	}
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := newClient(t, rdb, testConfig(t, prefix))
		for _, tt := range tests {
			id, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "hdr", Headers: tt.headers})
			var ve *worker.ValidationError
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("%s: %v", tt.name, err)
			case tt.field == "":
				if got := getJob(t, c, "hdr", id).Headers; !maps.Equal(got, tt.headers) {
					t.Errorf("%s: stored headers %v, want %v", tt.name, got, tt.headers)
				}
			case !errors.As(err, &ve) || ve.Field != tt.field:
				t.Errorf("%s: error %v, want a ValidationError of %s", tt.name, err, tt.field)
			}
		}
		// In a batch the error names the spec; nothing of the batch is stored.
		_, err := c.EnqueueMany(t.Context(), []worker.JobSpec{{Queue: "hdr2", ID: "ok"}, {Queue: "hdr2", Headers: map[string]string{"Bad": ""}}})
		var ve *worker.ValidationError
		if !errors.As(err, &ve) || ve.Field != `specs[1].Headers["Bad"]` {
			t.Errorf("EnqueueMany error %v, want one of specs[1].Headers[\"Bad\"]", err)
		}
		if !isGone(t, c, "hdr2", "ok") {
			t.Error("a batch with a bad header stored a job")
		}
	})
}

// TestHandlerSeesHeadersOnEveryAttempt: the handler reads the headers on
// its first attempt and on the retry, and Get shows them.
func TestHandlerSeesHeadersOnEveryAttempt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		rec := newRecorder()
		seen := make(chan map[string]string, 2)
		h := rec.Handler(func(_ context.Context, job *worker.Job) error {
			seen <- job.Headers
			if job.Attempt == 1 {
				return errors.New("first attempt fails")
			}
			return nil
		})
		reg := register(t, nil, "hq", h, worker.QueueOptions{Backoff: worker.FixedSteps{10 * time.Millisecond}})
		c := newClient(t, rdb, cfg)
		want := map[string]string{"x-request-id": "r-1", "x-tenant": "acme"}
		given := maps.Clone(want)
		id := enqueue(t, c, worker.JobSpec{Queue: "hq", Headers: given})
		if got := getJob(t, c, "hq", id).Headers; !maps.Equal(got, want) {
			t.Errorf("Get: headers %v, want %v", got, want)
		}
		startDaemon(t, rdb, reg, cfg)
		for attempt := 1; attempt <= 2; attempt++ {
			if got := receive(t, seen, 10*time.Second, "an attempt"); !maps.Equal(got, want) {
				t.Errorf("attempt %d: headers %v, want %v", attempt, got, want)
			}
		}
		if !maps.Equal(given, want) {
			t.Errorf("the caller's map changed: %v", given)
		}
	})
}

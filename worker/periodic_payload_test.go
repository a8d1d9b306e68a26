package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// TestPeriodicPayloadChecked: Register checks every periodic payload of a
// JSONHandler[T] queue against T, naming the schedule's index and the
// type; PeriodicJSON's encoding errors surface at Register and Validate.
func TestPeriodicPayloadChecked(t *testing.T) {
	t.Parallel()
	typed := worker.JSONHandler(func(context.Context, *worker.Job, Report) error { return nil })
	raw := worker.HandlerFunc(succeed)
	every := func(name string, payload string) worker.Periodic {
		p := worker.Periodic{Name: name, Every: time.Hour}
		if payload != "" {
			p.Payload = []byte(payload)
		}
		return p
	}
	for _, tt := range []struct {
		name    string
		handler worker.Handler
		p       worker.Periodic
		want    string // "" = accepted; else the reason of Periodic[1].Payload
	}{
		{"PeriodicJSON", typed, worker.PeriodicJSON(worker.Periodic{Name: "p", Every: time.Hour}, Report{Kind: "daily"}), ""},
		{"matching bytes", typed, every("p", `{"kind":"x"}`), ""},
		{"unknown field", typed, every("p", `{"knid":"x"}`), `does not decode into worker_test.Report: json: unknown field "knid"`},
		{"wrong type", typed, every("p", `{"kind":7}`), "does not decode into worker_test.Report: json: cannot unmarshal number"},
		{"not JSON", typed, every("p", `kind=x`), "does not decode into worker_test.Report: invalid character"},
		{"trailing data", typed, every("p", `{"kind":"x"} {}`), "does not decode into worker_test.Report: invalid character"},
		{"empty", typed, every("p", ""), "does not decode into worker_test.Report: unexpected end of JSON input"},
		{"another type", typed, worker.PeriodicJSON(worker.Periodic{Name: "p", Every: time.Hour}, Signup{Email: "a@b"}), `unknown field "email"`},
		{"unencodable", typed, worker.PeriodicJSON(worker.Periodic{Name: "p", Every: time.Hour}, func() {}), "encode func() as JSON: json: unsupported type"},
		{"payload given too", raw, worker.PeriodicJSON(every("p", "x"), Report{}), "is PeriodicJSON's encoding of the value; leave it nil (got 1 bytes)"},
		{"raw handler takes any bytes", raw, every("p", `not json`), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := worker.QueueOptions{Periodic: []worker.Periodic{every("first", `{"kind":"ok"}`), tt.p}}
			err := worker.NewRegistry().Register("reports", tt.handler, opts)
			if tt.want == "" {
				if err != nil {
					t.Errorf("Register = %v, want nil", err)
				}
				return
			}
			var ve *worker.ValidationError
			if !errors.As(err, &ve) || ve.Field != "Periodic[1].Payload" || !strings.Contains(ve.Reason, tt.want) {
				t.Errorf("Register = %v, want Periodic[1].Payload: %s", err, tt.want)
			}
		})
	}
	// Validate reports PeriodicJSON's own errors, without a handler.
	err := worker.QueueOptions{Periodic: []worker.Periodic{worker.PeriodicJSON(worker.Periodic{Name: "p", Every: time.Hour}, make(chan int))}}.Validate()
	var ve *worker.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Periodic[0].Payload" {
		t.Errorf("Validate = %v, want an error of Periodic[0].Payload", err)
	}
}

// TestPeriodicJSONFires: a schedule made with PeriodicJSON delivers its
// value to the queue's JSONHandler[T].
func TestPeriodicJSONFires(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		got := make(chan Report, 10)
		h := worker.JSONHandler(func(_ context.Context, _ *worker.Job, r Report) error {
			got <- r
			return nil
		})
		startDaemon(t, rdb, register(t, nil, "reports", h, worker.QueueOptions{Partitions: 2, Periodic: []worker.Periodic{
			worker.PeriodicJSON(worker.Periodic{Name: "tick", Every: time.Second, SkipMissed: true}, Report{Kind: "daily"}),
		}}), cfg)
		if r := receive(t, got, 10*time.Second, "a fire"); r.Kind != "daily" {
			t.Errorf("the handler got %+v, want Kind daily", r)
		}
	})
}

package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// signup is a payload with what encoding/json treats specially: HTML
// characters, a time, a map, a pointer, bytes and a renamed field.
type signup struct {
	Email   string            `json:"email"`
	Note    string            `json:"note"`
	At      time.Time         `json:"at"`
	Tags    map[string]int    `json:"tags"`
	Referer *string           `json:"referer,omitempty"`
	Avatar  []byte            `json:"avatar"`
	Extra   map[string]string `json:"-"`
}

// TestProducerReachesJSONHandler: what a Producer[T] enqueues reaches a
// JSONHandler[T] on a real Daemon as the same value, through Enqueue,
// EnqueueSpec and EnqueueMany.
func TestProducerReachesJSONHandler(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		got := make(chan signup, 4)
		reg := register(t, nil, "signups", worker.JSONHandler(func(_ context.Context, _ *worker.Job, s signup) error {
			got <- s
			return nil
		}), worker.QueueOptions{})
		startDaemon(t, rdb, reg, testConfig(t, prefix))
		p := worker.NewProducer[signup](newClient(t, rdb, testConfig(t, prefix)).Client, "signups")

		ref := "a <b> & 'c'"
		want := signup{
			Email: "ada@example.com", Note: "</script>&\u2028", At: time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC),
			Tags: map[string]int{"x": 1}, Referer: &ref, Avatar: []byte{0, 1, 255},
		}
		if _, err := p.Enqueue(t.Context(), want); err != nil {
			t.Fatal(err)
		}
		if s := receive(t, got, 10*time.Second, "the job of Enqueue"); !reflect.DeepEqual(s, want) {
			t.Errorf("handler got %+v; want %+v", s, want)
		}

		id, err := p.EnqueueSpec(t.Context(), want, worker.JobSpec{Queue: "signups", ID: "signup-1", Priority: worker.PriorityHigh})
		if err != nil || id != "signup-1" {
			t.Fatalf("EnqueueSpec = %q, %v", id, err)
		}
		receive(t, got, 10*time.Second, "the job of EnqueueSpec")
		later := worker.JobSpec{ID: "later-1", Delay: time.Hour}
		if _, err := p.EnqueueSpec(t.Context(), want, later); err != nil {
			t.Fatal(err)
		}
		if _, err := p.EnqueueSpec(t.Context(), want, later); !errors.Is(err, worker.ErrDuplicate) {
			t.Errorf("EnqueueSpec with the id of a waiting job: %v; want ErrDuplicate", err)
		}

		res, err := p.EnqueueMany(t.Context(), []signup{{Email: "a"}, {Email: "b"}})
		if err != nil || len(res) != 2 || res[0].Err != nil || res[1].Err != nil {
			t.Fatalf("EnqueueMany = %+v, %v", res, err)
		}
		emails := map[string]bool{}
		for range 2 {
			emails[receive(t, got, 10*time.Second, "the jobs of EnqueueMany").Email] = true
		}
		if !emails["a"] || !emails["b"] {
			t.Errorf("EnqueueMany delivered %v; want a and b", emails)
		}
	})
}

// TestProducerRefuses: the fields a Producer sets, values that do not
// encode and invalid jobs are refused before anything is written, naming
// the field, the value and its type.
func TestProducerRefuses(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	prefix := testkit.Prefix(t)
	cfg := testConfig(t, prefix)
	cfg.MaxPayloadBytes = 10
	c := newClient(t, rdb, cfg)
	ctx := t.Context()
	p := worker.NewProducer[signup](c.Client, "signups")

	var ve *worker.ValidationError
	_, err := p.EnqueueSpec(ctx, signup{}, worker.JobSpec{Queue: "other"})
	if !errors.As(err, &ve) || ve.Field != "Queue" {
		t.Errorf("EnqueueSpec with another queue: %v; want a *ValidationError on Queue", err)
	}
	_, err = p.EnqueueSpec(ctx, signup{}, worker.JobSpec{Payload: []byte("{}")})
	if !errors.As(err, &ve) || ve.Field != "Payload" {
		t.Errorf("EnqueueSpec with a payload: %v; want a *ValidationError on Payload", err)
	}
	if _, err := p.Enqueue(ctx, signup{}); !errors.As(err, &ve) || ve.Field != "Payload" {
		t.Errorf("Enqueue of a payload over MaxPayloadBytes: %v; want a *ValidationError on Payload", err)
	}
	small := worker.NewProducer[int](c.Client, "numbers")
	if _, err := small.EnqueueMany(ctx, []int{1, 12345678901}); !errors.As(err, &ve) || ve.Field != "vs[1].Payload" {
		t.Errorf("EnqueueMany with a payload over MaxPayloadBytes: %v; want a *ValidationError on vs[1].Payload", err)
	}
	if _, err := worker.NewProducer[int](c.Client, "bad{name}").Enqueue(ctx, 1); !errors.As(err, &ve) || ve.Field != "Queue" {
		t.Errorf("Enqueue to a bad queue name: %v; want a *ValidationError on Queue", err)
	}

	_, err = worker.NewProducer[chan int](c.Client, "chans").Enqueue(ctx, make(chan int))
	var ute *json.UnsupportedTypeError
	if !errors.As(err, &ute) || !strings.Contains(err.Error(), "encode chan int as JSON") {
		t.Errorf("Enqueue of a chan: %v; want the json error, naming chan int", err)
	}
	_, err = worker.NewProducer[any](c.Client, "anys").EnqueueMany(ctx, []any{1, func() {}})
	if err == nil || !strings.HasPrefix(err.Error(), `vs[1]: queue "anys": encode interface {} as JSON`) {
		t.Errorf("EnqueueMany with a func: %v; want it to name vs[1] and the type", err)
	}
	for _, q := range []string{"numbers", "anys"} {
		if s := stats(t, c, q); s.Ready != 0 {
			t.Errorf("queue %s holds %d jobs after a refused EnqueueMany; want none", q, s.Ready)
		}
	}
	if _, err := worker.NewProducer[int](nil, "q").Enqueue(ctx, 1); err == nil {
		t.Error("Enqueue on a nil Client: no error")
	}
}

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

// welcomeMail and dailyReport are payloads that name their kind, as
// River's job arguments do; refund's method has a pointer receiver.
type welcomeMail struct {
	To string `json:"to"`
}

func (welcomeMail) Kind() string { return "mail.welcome" }

type dailyReport struct {
	Day string `json:"day"`
}

func (dailyReport) Kind() string { return "report:daily" }

type refund struct {
	Cents int `json:"cents"`
}

func (*refund) Kind() string { return "billing/refund" }

// badKind names a kind ValidateKind refuses.
type badKind struct{}

func (badKind) Kind() string { return "has space" }

// TestTypedKinds: Producer[T] stamps T's Kind() on every job, through
// Enqueue, EnqueueSpec and EnqueueMany, and a Kinds of JSONHandler[T]s under
// the same keys runs each with its handler, on a queue of 3 partitions; a
// periodic job of a kind fires with it, header and all.
func TestTypedKinds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		type ran struct {
			kind, id string
			payload  any
		}
		got := make(chan ran, 16)
		reg := register(t, nil, "typed", worker.Kinds{
			"mail.welcome": worker.JSONHandler(func(_ context.Context, job *worker.Job, m welcomeMail) error {
				got <- ran{job.Kind, job.ID, m}
				return nil
			}),
			"report:daily": worker.JSONHandler(func(_ context.Context, job *worker.Job, r dailyReport) error {
				got <- ran{job.Kind, job.ID, r}
				return nil
			}),
			"billing/refund": worker.JSONHandler(func(_ context.Context, job *worker.Job, r *refund) error {
				got <- ran{job.Kind, job.ID, *r}
				return nil
			}),
		}, worker.QueueOptions{Partitions: 3, Periodic: []worker.Periodic{
			{Name: "daily", Kind: "report:daily", Every: time.Second, Payload: []byte(`{"day":"today"}`)},
		}})
		c := newClient(t, rdb, cfg)
		mails := worker.NewProducer[welcomeMail](c.Client, "typed")
		reports := worker.NewProducer[dailyReport](c.Client, "typed")
		refunds := worker.NewProducer[*refund](c.Client, "typed")

		if _, err := mails.Enqueue(t.Context(), welcomeMail{To: "ada"}); err != nil {
			t.Fatal(err)
		}
		if _, err := reports.EnqueueSpec(t.Context(), dailyReport{Day: "mon"}, worker.JobSpec{ID: "r1", Kind: "report:daily"}); err != nil {
			t.Fatalf("EnqueueSpec with T's own kind: %v", err)
		}
		if _, err := refunds.EnqueueMany(t.Context(), []*refund{{Cents: 5}, {Cents: 7}}); err != nil {
			t.Fatal(err)
		}
		job := getJob(t, c, "typed", "r1")
		if job.Kind != "report:daily" || job.Headers != nil {
			t.Errorf("Get of a typed producer's job: kind %q headers %v", job.Kind, job.Headers)
		}

		startDaemon(t, rdb, reg, cfg)
		want := map[string]int{"mail.welcome": 1, "report:daily": 2, "billing/refund": 2} // the report: one enqueued, one fired
		seen := map[string]int{}
		fired := false
		for range 5 {
			r := receive(t, got, 10*time.Second, "a typed job")
			seen[r.kind]++
			switch p := r.payload.(type) {
			case welcomeMail:
				if p.To != "ada" {
					t.Errorf("mail payload %+v", p)
				}
			case dailyReport:
				if strings.HasPrefix(r.id, "periodic:daily:") {
					fired = p.Day == "today"
				}
			}
		}
		for k, n := range want {
			if seen[k] < n {
				t.Errorf("kind %q ran %d times, want at least %d (all: %v)", k, seen[k], n, seen)
			}
		}
		if !fired {
			t.Errorf("the periodic job of kind report:daily did not run with its handler and payload (kinds seen %v)", seen)
		}
	})
}

// TestTypedKindRefusals: a Producer refuses another spec.Kind than T's and
// a kind ValidateKind refuses, both naming Kind; Register refuses a
// JSONHandler[T] under another key than T's Kind(), naming both, and a
// periodic job whose kind the queue's handler does not serve.
func TestTypedKindRefusals(t *testing.T) {
	t.Parallel()
	rdb := backends[0].Connect(t)
	c := newClient(t, rdb, testConfig(t, "kindref"))
	_, err := worker.NewProducer[welcomeMail](c.Client, "q").EnqueueSpec(t.Context(), welcomeMail{}, worker.JobSpec{Kind: "mail.other"})
	checkInvalid(t, err, "Kind", "")
	if err == nil || !strings.Contains(err.Error(), `"mail.welcome"`) {
		t.Errorf("refusal %v does not name T's kind", err)
	}
	_, err = worker.NewProducer[badKind](c.Client, "q").Enqueue(t.Context(), badKind{})
	checkInvalid(t, err, "Kind", "")
	// A producer of an untyped payload passes the spec's kind on.
	id, err := worker.NewProducer[map[string]int](c.Client, "q").EnqueueSpec(t.Context(), map[string]int{"n": 1}, worker.JobSpec{Kind: "free.kind"})
	if err != nil {
		t.Fatal(err)
	}
	if job := getJob(t, c, "q", id); job.Kind != "free.kind" {
		t.Errorf("untyped producer's job kind %q, want free.kind", job.Kind)
	}

	mail := worker.JSONHandler(func(context.Context, *worker.Job, welcomeMail) error { return nil })
	ok := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	err = worker.NewRegistry().Register("q", worker.Kinds{"mail.other": mail}, worker.QueueOptions{})
	if !errors.Is(err, worker.ErrInvalid) || !strings.Contains(err.Error(), `"mail.other"`) || !strings.Contains(err.Error(), `"mail.welcome"`) {
		t.Errorf("Register of a typed handler under another kind: %v; want ErrInvalid naming both kinds", err)
	}
	if err := worker.NewRegistry().Register("q", worker.Kinds{"": mail}, worker.QueueOptions{}); !errors.Is(err, worker.ErrInvalid) {
		t.Errorf("Register of a typed handler for jobs without a kind: %v; want ErrInvalid", err)
	}
	if err := worker.NewRegistry().Register("q", worker.Kinds{"mail.welcome": mail}, worker.QueueOptions{}); err != nil {
		t.Errorf("Register of a typed handler under its kind: %v", err)
	}
	if err := worker.NewRegistry().Register("q", mail, worker.QueueOptions{}); err != nil {
		t.Errorf("Register of a typed handler as the queue's one handler: %v", err)
	}

	every := func(kind string) worker.QueueOptions {
		return worker.QueueOptions{Periodic: []worker.Periodic{{Name: "p", Kind: kind, Every: time.Minute}}}
	}
	for _, tt := range []struct {
		name  string
		h     worker.Handler
		opts  worker.QueueOptions
		field string
	}{
		{"a kind on a queue of one handler", ok, every("a"), "Periodic[0].Kind"},
		{"a kind the Kinds lacks", worker.Kinds{"a": ok}, every("b"), "Periodic[0].Kind"},
		{"no kind, and the Kinds lacks \"\"", worker.Kinds{"a": ok}, every(""), "Periodic[0].Kind"},
		{"a bad kind", worker.Kinds{"a": ok}, every("a b"), "Periodic[0].Kind"},
	} {
		err := worker.NewRegistry().Register("q", tt.h, tt.opts)
		var ve *worker.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("%s: Register = %v; want a ValidationError of %s", tt.name, err, tt.field)
		}
	}
	for name, h := range map[string]worker.Handler{"served": worker.Kinds{"a": ok, "b": ok}} {
		if err := worker.NewRegistry().Register("q", h, every("b")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := worker.NewRegistry().Register("q", worker.Kinds{"": ok}, every("")); err != nil {
		t.Errorf("a periodic job without a kind, served by Kinds[\"\"]: %v", err)
	}
}

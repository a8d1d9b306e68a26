package worker_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestKindsRouteOneQueue: one queue, split in partitions, serves two kinds
// and jobs without a kind; each job runs with its kind's handler, sees its
// Kind and its own headers (never the header the kind travels in), and a
// job of a kind nobody registered dies with an error naming the kind.
func TestKindsRouteOneQueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		type seen struct {
			handler, kind string
			headers       map[string]string
		}
		ran := make(chan seen, 8)
		as := func(name string) worker.Handler {
			return worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
				ran <- seen{name, job.Kind, job.Headers}
				return nil
			})
		}
		reg := register(t, nil, "kq", worker.Kinds{
			"email.send":   as("email"),
			"report:build": as("report"),
			"":             as("plain"),
		}, worker.QueueOptions{Partitions: 3})
		c := newClient(t, rdb, cfg)
		email := enqueue(t, c, worker.JobSpec{Queue: "kq", Kind: "email.send", Headers: map[string]string{"x-tenant": "acme"}})
		enqueue(t, c, worker.JobSpec{Queue: "kq", Kind: "report:build"})
		enqueue(t, c, worker.JobSpec{Queue: "kq"})
		typo := enqueue(t, c, worker.JobSpec{Queue: "kq", Kind: "reprot:build"})

		job := getJob(t, c, "kq", email)
		if job.Kind != "email.send" || !maps.Equal(job.Headers, map[string]string{"x-tenant": "acme"}) {
			t.Errorf("Get: kind %q headers %v; want email.send and only x-tenant", job.Kind, job.Headers)
		}

		startDaemon(t, rdb, reg, cfg)
		got := map[string]seen{}
		for range 3 {
			s := receive(t, ran, 10*time.Second, "a job")
			got[s.handler] = s
		}
		if got["email"].kind != "email.send" || got["email"].headers["x-tenant"] != "acme" || len(got["email"].headers) != 1 {
			t.Errorf("email handler saw %+v", got["email"])
		}
		if got["report"].kind != "report:build" || got["report"].headers != nil {
			t.Errorf("report handler saw %+v", got["report"])
		}
		if got["plain"].kind != "" {
			t.Errorf("the handler of jobs without a kind saw kind %q", got["plain"].kind)
		}
		var dead *worker.Job
		testkit.Eventually(t, 10*time.Second, "the typo's job to die", func() bool {
			dead = getJob(t, c, "kq", typo)
			return dead.State == worker.StateDead
		})
		if !strings.Contains(dead.LastError, `kind "reprot:build"`) || !strings.Contains(dead.LastError, `"email.send"`) {
			t.Errorf("the unknown kind's last error %q names neither the kind nor the kinds served", dead.LastError)
		}
		select {
		case s := <-ran:
			t.Errorf("a handler ran the unknown kind: %+v", s)
		default:
		}
	})
}

// TestKindValidation: a kind is checked like every other field of a job,
// the header it travels in is Courier's own, and Register checks Kinds.
func TestKindValidation(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"has space", "é", strings.Repeat("k", worker.MaxKindLen+1), "a|b"} {
		if err := worker.ValidateKind(bad); err == nil {
			t.Errorf("ValidateKind(%q) = nil", bad)
		}
	}
	for _, good := range []string{"email:deliver", "reports/daily", "a.b_c-D9", strings.Repeat("k", worker.MaxKindLen)} {
		if err := worker.ValidateKind(good); err != nil {
			t.Errorf("ValidateKind(%q) = %v", good, err)
		}
	}
	rdb := backends[0].Connect(t)
	c := newClient(t, rdb, testConfig(t, "kindval"))
	_, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", Kind: "no spaces"})
	checkInvalid(t, err, "Kind", "")
	_, err = c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", Headers: map[string]string{"courier.kind": "x"}})
	checkInvalid(t, err, `Headers["courier.kind"]`, "")
	full := map[string]string{}
	for i := range worker.MaxHeaders {
		full["h"+strings.Repeat("x", i)] = "v"
	}
	_, err = c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", Kind: "k", Headers: full})
	checkInvalid(t, err, "Headers", "")

	reg := worker.NewRegistry()
	ok := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	for name, h := range map[string]worker.Handler{
		"empty":    worker.Kinds{},
		"nil":      worker.Kinds{"a": nil},
		"bad name": worker.Kinds{"a b": ok},
	} {
		if err := reg.Register("q", h, worker.QueueOptions{}); !errors.Is(err, worker.ErrInvalid) {
			t.Errorf("Register with %s Kinds: %v, want ErrInvalid", name, err)
		}
	}
}

package api

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestPause: pause and resume answer the state after the call, change
// nothing when repeated, show in GET /v1/queues/{queue} and GET
// /v1/queues, and hold a served queue's jobs until the resume.
func TestPause(t *testing.T) {
	t.Parallel()
	b := setup(t)
	paused := func(queue string) bool {
		t.Helper()
		var q wire.Queue
		b.want(b.do("GET", "/v1/queues/"+queue, adminSecret, ""), 200).json(t, &q)
		return q.Paused
	}
	state := func(r reply) bool {
		t.Helper()
		var s pauseState
		r.json(t, &s)
		return s.Paused
	}
	b.enqueue(worker.JobSpec{Queue: "other"})
	if paused("emails") {
		t.Error("a queue no one paused shows paused")
	}

	for range 2 { // the second pause changes nothing
		if r := b.want(b.do("POST", "/v1/queues/emails/pause", adminSecret, ""), 200); !state(r) {
			t.Errorf("pause answered %s", r.body)
		}
	}
	if !paused("emails") {
		t.Error("GET does not show the pause")
	}
	if s, err := b.client.Stats(t.Context(), "emails"); err != nil || !s.Paused {
		t.Errorf("the library sees %+v, %v; want paused", s, err)
	}

	// A served queue's jobs wait while it is paused.
	var handled atomic.Int64
	b.run("emails", func(context.Context, *worker.Job) error { handled.Add(1); return nil }, worker.QueueOptions{})
	b.enqueue(worker.JobSpec{Queue: "emails", ID: "held"})
	testkit.Eventually(t, 10*time.Second, "a worker serving emails", func() bool {
		f, err := b.client.Fleet(t.Context(), "emails")
		return err == nil && len(f.Processes) == 1
	})
	var list struct{ Queues []wire.Queue }
	b.want(b.do("GET", "/v1/queues", adminSecret, ""), 200).json(t, &list)
	if len(list.Queues) != 2 || list.Queues[0].Name != "emails" || !list.Queues[0].Paused ||
		list.Queues[0].Jobs != (wire.Counts{Ready: 1}) || list.Queues[1].Paused {
		t.Errorf("GET /v1/queues: %+v", list.Queues)
	}
	if n := handled.Load(); n != 0 {
		t.Errorf("%d job(s) of a paused queue were run", n)
	}

	for range 2 {
		if r := b.want(b.do("POST", "/v1/queues/emails/resume", adminSecret, ""), 200); state(r) {
			t.Errorf("resume answered %s", r.body)
		}
	}
	if paused("emails") {
		t.Error("GET still shows the queue paused")
	}
	testkit.Eventually(t, 10*time.Second, "the held job run after the resume", func() bool { return handled.Load() == 1 })
}

// TestPauseRefuses: pause and resume are for admins, on a valid queue
// name, and a refused call changes nothing.
func TestPauseRefuses(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		o.Tokens = append(o.Tokens, Token{Name: "mail-ops", Secret: limitedAdminSecret, Role: RoleAdmin, Queues: []string{"emails"}})
	})
	tests := []struct {
		name, path, secret string
		status             int
		code               wire.Code
		field              string
	}{
		{"producer", "/v1/queues/emails/pause", producerSecret, http.StatusForbidden, wire.CodeForbidden, "Authorization"},
		{"producer resumes", "/v1/queues/emails/resume", producerSecret, http.StatusForbidden, wire.CodeForbidden, "Authorization"},
		{"no token", "/v1/queues/emails/pause", "", http.StatusUnauthorized, wire.CodeUnauthorized, "Authorization"},
		{"token limited to another queue", "/v1/queues/billing/pause", limitedAdminSecret, http.StatusForbidden, wire.CodeForbidden, "queue"},
		{"bad queue name", "/v1/queues/a%7Bb%7D/pause", adminSecret, http.StatusBadRequest, wire.CodeInvalidField, "queue"},
		{"bad queue name on resume", "/v1/queues/a%20b/resume", adminSecret, http.StatusBadRequest, wire.CodeInvalidField, "queue"},
		{"query parameter", "/v1/queues/emails/pause?now=1", adminSecret, http.StatusBadRequest, wire.CodeUnknownField, "now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := b.want(b.do("POST", tt.path, tt.secret, ""), tt.status).apiErr(t)
			if e.Code != tt.code || e.Field != tt.field {
				t.Errorf("error %+v, want code %s field %q", e, tt.code, tt.field)
			}
		})
	}
	t.Cleanup(func() {
		for _, q := range []string{"emails", "billing"} {
			if s, err := b.client.Stats(context.WithoutCancel(t.Context()), q); err != nil || s.Paused {
				t.Errorf("queue %s after refused calls: %+v, %v", q, s, err)
			}
		}
	})
}

// TestClientPause: the API client pauses and resumes as worker.Client
// does, reads the state in Stats, and refuses a bad name alike.
func TestClientPause(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, adminSecret)
	ctx := t.Context()
	if err := c.Pause(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	for name, stats := range map[string]func(context.Context, string) (admin.QueueStats, error){"API": c.Stats, "direct": b.client.Stats} {
		if s, err := stats(ctx, "q"); err != nil || !s.Paused {
			t.Errorf("%s: after Pause %+v, %v", name, s, err)
		}
	}
	if err := c.Resume(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Stats(ctx, "q"); err != nil || s.Paused {
		t.Errorf("after Resume %+v, %v", s, err)
	}
	for _, f := range []func(context.Context, string) error{c.Pause, c.Resume} {
		err := f(ctx, "a b")
		direct := b.client.Pause(ctx, "a b")
		if !errors.Is(err, worker.ErrInvalid) || direct == nil || err.Error() != direct.Error() {
			t.Errorf("bad name: %v; directly: %v", err, direct)
		}
	}
	err := newClient(t, b, producerSecret).Pause(ctx, "q")
	var e *Error
	if !errors.As(err, &e) || e.Code != wire.CodeForbidden {
		t.Errorf("producer: %v", err)
	}
}

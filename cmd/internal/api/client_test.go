package api

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func newClient(t *testing.T, b *bundle, secret string) *Client {
	t.Helper()
	c, err := NewClient(b.srv.URL+"/v1/", secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClient: the API client does what admin.Client does, with the same
// results and errors.
func TestClient(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, adminSecret)
	ctx := t.Context()

	payloads := map[string]string{
		"json":     `{"a":[1,2],"b":"<&>"}`,
		"pretty":   "{\n  \"a\": 1\n}\n",
		"text":     "hello world",
		"binary":   "\x00\xff\x01",
		"empty":    "",
		"number":   "42",
		"not utf8": "\"\xff\"",
	}
	for name, p := range payloads {
		id, err := enqueueOne(ctx, c, worker.JobSpec{Queue: "q", ID: strings.ReplaceAll(name, " ", "-"), Payload: []byte(p),
			Delay: 90 * time.Second, MaxAttempts: 3, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		direct, err := b.client.Get(ctx, "q", id)
		if err != nil {
			t.Fatal(err)
		}
		if string(direct.Payload) != p || direct.MaxAttempts != 3 || direct.Timeout != time.Minute || direct.State != worker.StateScheduled {
			t.Errorf("%s: stored %+v (payload %q)", name, direct, direct.Payload)
		}
		viaAPI, err := c.Get(ctx, "q", id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(viaAPI, direct) {
			t.Errorf("%s: Get through the API\n%+v\ndirectly\n%+v", name, viaAPI, direct)
		}
	}
	at := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	id, err := enqueueOne(ctx, c, worker.JobSpec{Queue: "q", RunAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := b.client.Get(ctx, "q", id); err != nil || !j.RunAt.Equal(at) {
		t.Errorf("run-at: %+v %v", j, err)
	}

	// Errors match the worker's.
	id, err = enqueueOne(ctx, c, worker.JobSpec{Queue: "q", ID: "json"})
	if !errors.Is(err, worker.ErrDuplicate) || id != "json" {
		t.Errorf("duplicate: %q %v", id, err)
	}
	_, err = c.Get(ctx, "q", "missing")
	if _, direct := b.client.Get(ctx, "q", "missing"); !errors.Is(err, worker.ErrNotFound) || err.Error() != direct.Error() {
		t.Errorf("missing job: %v; directly: %v", err, direct)
	}
	for _, spec := range []worker.JobSpec{
		{Queue: "q", Delay: -time.Second},
		{Queue: "q", ID: "a b"},
		{Queue: "a b"},
		{Queue: "q", RunAt: time.Now().Add(10 * 365 * 24 * time.Hour)},
		{Queue: "q", MaxAttempts: -1},
	} {
		_, err := enqueueOne(ctx, c, spec)
		if !errors.Is(err, worker.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", spec, err)
		}
	}
	_, err = enqueueOne(ctx, c, worker.JobSpec{Queue: "q", ID: "a b"})
	if _, direct := enqueueOne(ctx, b.client, worker.JobSpec{Queue: "q", ID: "a b"}); err == nil || err.Error() != direct.Error() {
		t.Errorf("invalid id: %v; directly: %v", err, direct)
	}

	// Queues and stats.
	s, err := c.Stats(ctx, "q")
	if direct, _ := b.client.Stats(ctx, "q"); err != nil || s != direct || s.Scheduled != int64(len(payloads)+1) {
		t.Errorf("stats %+v %v; directly %+v", s, err, direct)
	}
	names, err := c.Queues(ctx, admin.QueueListParams{})
	if direct, _ := b.client.Queues(ctx, admin.QueueListParams{}); err != nil || !reflect.DeepEqual(names, direct) || !reflect.DeepEqual(names.Names, []string{"q"}) {
		t.Errorf("queues %+v %v; directly %+v", names, err, direct)
	}
	if _, err := c.Queues(ctx, admin.QueueListParams{Only: []string{"q"}}); !errors.Is(err, worker.ErrInvalid) || !strings.Contains(err.Error(), "Only") {
		t.Errorf("queues of a list: %v, want a refusal naming Only", err)
	}

	// Cancel.
	if err := c.Cancel(ctx, "q", "text"); err != nil {
		t.Errorf("cancel: %v", err)
	}
	if err := c.Cancel(ctx, "q", "text"); err != nil {
		t.Errorf("cancel twice: %v, want nil (cancelled already)", err)
	}

	// Dead jobs: one list, one triage.
	b.kill("d", "x1", "x2", "x3")
	list := admin.JobListParams{Queue: "d", State: worker.StateDead, Limit: 2}
	page, err := c.Jobs(ctx, list)
	direct, _ := b.client.Jobs(ctx, list)
	if err != nil || !reflect.DeepEqual(page, direct) {
		t.Errorf("dead page\n%+v %v\ndirectly\n%+v", page, err, direct)
	}
	list.Cursor = page.Next
	page, err = c.Jobs(ctx, list)
	if err != nil || len(page.Jobs) != 1 || page.Next != "" {
		t.Errorf("second page %+v %v", page, err)
	}
	if err := c.Cancel(ctx, "d", "x1"); !errors.Is(err, worker.ErrJobDead) {
		t.Errorf("cancel a dead job: %v", err)
	}
	triage := func(p admin.TriageParams, changed int) {
		t.Helper()
		if res, err := c.Triage(ctx, p); res.Changed != changed || err != nil {
			t.Errorf("%s %v: %+v %v, want %d changed", p.Action, p.IDs, res, err, changed)
		}
	}
	triage(admin.TriageParams{Queue: "d", Action: admin.TriageRequeue, IDs: []string{"x1", "nope"}}, 1)
	triage(admin.TriageParams{Queue: "d", Action: admin.TriagePurge, IDs: []string{"x2", "x1"}}, 1) // x1 is due again: not purged
	triage(admin.TriageParams{Queue: "d", Action: admin.TriageRequeue}, 1)
	b.kill("d2", "y1", "y2")
	triage(admin.TriageParams{Queue: "d2", Action: admin.TriagePurge}, 2)
	if _, err := c.Triage(ctx, admin.TriageParams{Queue: "d2", Action: "delete"}); !errors.Is(err, worker.ErrInvalid) || !strings.Contains(err.Error(), "Action") {
		t.Errorf("an unknown action: %v", err)
	}

	// Several jobs: a batch per queue, the results in the specs' order.
	res, err := c.Enqueue(ctx, []worker.JobSpec{{Queue: "b", ID: "1"}, {Queue: "b2", ID: "1"}, {Queue: "b", ID: "1"}, {Queue: "b", Payload: []byte("x")}})
	if err != nil || len(res) != 4 || res[0].Err != nil || res[1].Err != nil || !errors.Is(res[2].Err, worker.ErrDuplicate) || res[3].ID == "" {
		t.Errorf("batch: %+v %v", res, err)
	}
	if s, err := b.client.Stats(ctx, "b2"); err != nil || s.Ready != 1 {
		t.Errorf("the second queue's job: %+v %v", s, err)
	}
	_, err = c.Enqueue(ctx, []worker.JobSpec{{Queue: "b"}, {Queue: "a b"}})
	if _, direct := b.client.Enqueue(ctx, []worker.JobSpec{{Queue: "b"}, {Queue: "a b"}}); err == nil || err.Error() != direct.Error() {
		t.Errorf("a bad queue among several: %v; directly: %v", err, direct)
	}
}

// TestClientIsOperator: the API's Go client has exactly the methods of
// admin.Operator, the one list of the operator's verbs: a verb added to
// either is added to both.
func TestClientIsOperator(t *testing.T) {
	t.Parallel()
	methods := func(typ reflect.Type) []string {
		var names []string
		for i := range typ.NumMethod() {
			names = append(names, typ.Method(i).Name)
		}
		return names
	}
	client, operator := methods(reflect.TypeFor[*Client]()), methods(reflect.TypeFor[admin.Operator]())
	if !reflect.DeepEqual(client, operator) {
		t.Errorf("*api.Client has the methods %v; admin.Operator %v", client, operator)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	_, err := newClient(t, b, "wrong-token-0123456789").Queues(ctx, admin.QueueListParams{})
	var e *Error
	if !errors.As(err, &e) || e.Code != wire.CodeUnauthorized || !strings.Contains(err.Error(), b.srv.URL) {
		t.Errorf("wrong token: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("the error shows the token: %v", err)
	}
	_, err = newClient(t, b, producerSecret).Queues(ctx, admin.QueueListParams{})
	if !errors.As(err, &e) || e.Code != wire.CodeForbidden {
		t.Errorf("producer: %v", err)
	}
	c, err := NewClient("http://127.0.0.1:1", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Queues(ctx, admin.QueueListParams{}); err == nil || !strings.Contains(err.Error(), "courier API") {
		t.Errorf("unreachable API: %v", err)
	}
	for _, u := range []string{"", "127.0.0.1:9750", "ftp://x", "http://", "http://x/?a=b"} {
		if _, err := NewClient(u, "", nil); err == nil {
			t.Errorf("NewClient(%q) accepted it", u)
		}
	}
}

// TestClientCancel: a producer's API client cancels as admin.Client does,
// a running job included, and fails alike.
func TestClientCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, producerSecret)
	ctx := t.Context()

	b.enqueue(worker.JobSpec{Queue: "q", ID: "later", Delay: time.Hour})
	if err := c.Cancel(ctx, "q", "later"); err != nil {
		t.Fatalf("cancel a job that has not started: %v", err)
	}
	err := c.Cancel(ctx, "q", "later")
	if direct := b.client.Cancel(ctx, "q", "later"); err != nil || direct != nil {
		t.Errorf("cancel twice: %v; directly: %v; want nil (cancelled already)", err, direct)
	}
	err = c.Cancel(ctx, "q", "missing")
	if direct := b.client.Cancel(ctx, "q", "missing"); !errors.Is(err, worker.ErrNotFound) || direct == nil || err.Error() != direct.Error() {
		t.Errorf("cancel a missing job: %v; directly: %v", err, direct)
	}
	err = c.Cancel(ctx, "q", "a b")
	if direct := b.client.Cancel(ctx, "q", "a b"); !errors.Is(err, worker.ErrInvalid) || direct == nil || err.Error() != direct.Error() {
		t.Errorf("bad id: %v; directly: %v", err, direct)
	}

	started, causes := make(chan struct{}), make(chan error, 1)
	b.run("busy", func(ctx context.Context, _ *worker.Job) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return errors.New("ignored: the job was cancelled")
	}, worker.QueueOptions{Concurrency: 1})
	b.enqueue(worker.JobSpec{Queue: "busy", ID: "running"})
	<-started
	if err := c.Cancel(ctx, "busy", "running"); err != nil {
		t.Fatalf("cancel a running job: %v", err)
	}
	select {
	case cause := <-causes:
		if !errors.Is(cause, worker.ErrCancelled) {
			t.Errorf("the handler's context ended with %v, want ErrCancelled", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end within 10s of the cancel")
	}
	if j, err := c.Get(ctx, "busy", "running"); err != nil || j.State != worker.StateCancelled || j.LastError != "cancelled" || j.FinishedAt.IsZero() {
		t.Errorf("the cancelled job: %+v, %v", j, err)
	}
	if err := c.Cancel(ctx, "busy", "running"); err != nil {
		t.Errorf("cancel a cancelled job: %v, want nil", err)
	}
	b.kill("doomed", "x")
	err = c.Cancel(ctx, "doomed", "x")
	var e *Error
	if !errors.Is(err, worker.ErrJobDead) || !errors.As(err, &e) || e.Code != wire.CodeConflict {
		t.Errorf("cancel a dead job: %v, want ErrJobDead", err)
	}
	admin := newClient(t, b, adminSecret)
	for _, state := range []worker.State{worker.StateCancelled, "completed"} {
		res, err := admin.Triage(ctx, adminTriage("busy", state))
		direct, derr := b.client.Triage(ctx, adminTriage("busy", state))
		if state == worker.StateCancelled && (err != nil || res.Changed != 1 || derr != nil || direct.Changed != 0) {
			t.Errorf("requeue of the cancelled through the API: %+v, %v; then directly %+v, %v", res, err, direct, derr)
		}
		if state != worker.StateCancelled && (!errors.Is(err, worker.ErrInvalid) || !strings.Contains(err.Error(), "State")) {
			t.Errorf("triage of state %s: %v, want a refusal naming State", state, err)
		}
	}
}

// adminTriage is a dry-run-free requeue of every job of queue in state.
func adminTriage(queue string, state worker.State) admin.TriageParams {
	return admin.TriageParams{Queue: queue, State: state, Action: admin.TriageRequeue}
}

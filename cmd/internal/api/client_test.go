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
)

func newClient(t *testing.T, b *bundle, secret string) *Client {
	t.Helper()
	c, err := NewClient(b.srv.URL+"/v1/", secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClient: the API client does what worker.Client does, with the same
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
		id, err := c.Enqueue(ctx, worker.JobSpec{Queue: "q", ID: strings.ReplaceAll(name, " ", "-"), Payload: []byte(p),
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
	id, err := c.Enqueue(ctx, worker.JobSpec{Queue: "q", RunAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := b.client.Get(ctx, "q", id); err != nil || !j.RunAt.Equal(at) {
		t.Errorf("run-at: %+v %v", j, err)
	}

	// Errors match the worker's.
	id, err = c.Enqueue(ctx, worker.JobSpec{Queue: "q", ID: "json"})
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
		_, err := c.Enqueue(ctx, spec)
		if !errors.Is(err, worker.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", spec, err)
		}
	}
	_, err = c.Enqueue(ctx, worker.JobSpec{Queue: "q", ID: "a b"})
	if _, direct := b.client.Enqueue(ctx, worker.JobSpec{Queue: "q", ID: "a b"}); err == nil || err.Error() != direct.Error() {
		t.Errorf("invalid id: %v; directly: %v", err, direct)
	}

	// Queues and stats.
	s, err := c.Stats(ctx, "q")
	if direct, _ := b.client.Stats(ctx, "q"); err != nil || s != direct || s.Scheduled != int64(len(payloads)+1) {
		t.Errorf("stats %+v %v; directly %+v", s, err, direct)
	}
	names, err := c.Queues(ctx)
	if err != nil || !reflect.DeepEqual(names, []string{"q"}) {
		t.Errorf("queues %v %v", names, err)
	}

	// Cancel.
	if err := c.Cancel(ctx, "q", "text"); err != nil {
		t.Errorf("cancel: %v", err)
	}
	if err := c.Cancel(ctx, "q", "text"); !errors.Is(err, worker.ErrNotFound) {
		t.Errorf("cancel twice: %v", err)
	}

	// Dead jobs.
	b.kill("d", "x1", "x2", "x3")
	page, err := c.Dead(ctx, "d", worker.DeadQuery{Limit: 2})
	direct, _ := b.client.Dead(ctx, "d", worker.DeadQuery{Limit: 2})
	if err != nil || !reflect.DeepEqual(page, direct) {
		t.Errorf("dead page\n%+v %v\ndirectly\n%+v", page, err, direct)
	}
	page, err = c.Dead(ctx, "d", worker.DeadQuery{Cursor: page.Next})
	if err != nil || len(page.Jobs) != 1 || page.Next != "" {
		t.Errorf("second page %+v %v", page, err)
	}
	if err := c.Cancel(ctx, "d", "x1"); !errors.Is(err, worker.ErrJobDead) {
		t.Errorf("cancel a dead job: %v", err)
	}
	if n, err := c.Requeue(ctx, "d", "x1", "nope"); n != 1 || err != nil {
		t.Errorf("requeue: %d %v", n, err)
	}
	if n, err := c.Purge(ctx, "d", "x2", "x1"); n != 1 || err != nil {
		t.Errorf("purge: %d %v (x1 is due again: not purged)", n, err)
	}
	if n, err := c.RequeueAll(ctx, "d"); n != 1 || err != nil {
		t.Errorf("requeue all: %d %v", n, err)
	}
	b.kill("d2", "y1", "y2")
	if n, err := c.PurgeAll(ctx, "d2"); n != 2 || err != nil {
		t.Errorf("purge all: %d %v", n, err)
	}

	// A batch.
	res, err := c.EnqueueBatch(ctx, "b", []worker.JobSpec{{ID: "1"}, {ID: "1"}, {Payload: []byte("x")}})
	if err != nil || len(res) != 3 || res[0].Err != nil || !errors.Is(res[1].Err, worker.ErrDuplicate) || res[2].ID == "" {
		t.Errorf("batch: %+v %v", res, err)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	_, err := newClient(t, b, "wrong-token-0123456789").Queues(ctx)
	var e *Error
	if !errors.As(err, &e) || e.Code != wire.CodeUnauthorized || !strings.Contains(err.Error(), b.srv.URL) {
		t.Errorf("wrong token: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-token") {
		t.Errorf("the error shows the token: %v", err)
	}
	_, err = newClient(t, b, producerSecret).Queues(ctx)
	if !errors.As(err, &e) || e.Code != wire.CodeForbidden {
		t.Errorf("producer: %v", err)
	}
	c, err := NewClient("http://127.0.0.1:1", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Queues(ctx); err == nil || !strings.Contains(err.Error(), "courier API") {
		t.Errorf("unreachable API: %v", err)
	}
	for _, u := range []string{"", "127.0.0.1:9750", "ftp://x", "http://", "http://x/?a=b"} {
		if _, err := NewClient(u, "", nil); err == nil {
			t.Errorf("NewClient(%q) accepted it", u)
		}
	}
}

// TestClientCancel: a producer's API client cancels as worker.Client does,
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
	if direct := b.client.Cancel(ctx, "q", "later"); !errors.Is(err, worker.ErrNotFound) || direct == nil || err.Error() != direct.Error() {
		t.Errorf("cancel twice: %v; directly: %v", err, direct)
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
	if j, err := c.Get(ctx, "busy", "running"); err != nil || j.State != worker.StateDead || j.LastError != "cancelled" {
		t.Errorf("the cancelled job: %+v, %v", j, err)
	}
	err = c.Cancel(ctx, "busy", "running")
	var e *Error
	if !errors.Is(err, worker.ErrJobDead) || !errors.As(err, &e) || e.Code != wire.CodeConflict {
		t.Errorf("cancel a cancelled job: %v, want ErrJobDead", err)
	}
}

// jobClient is what the CLI does with either client: the API client's
// methods have worker.Client's signatures, so its --api mode and its
// direct mode share one interface.
type jobClient interface {
	Enqueue(ctx context.Context, spec worker.JobSpec) (string, error)
	Get(ctx context.Context, queue, id string) (*worker.Job, error)
	Cancel(ctx context.Context, queue, id string) error
	Queues(ctx context.Context) ([]string, error)
	Stats(ctx context.Context, queue string) (worker.QueueStats, error)
	Fleet(ctx context.Context, queue string) (worker.Fleet, error)
	Pause(ctx context.Context, queue string) error
	Resume(ctx context.Context, queue string) error
	ForgetQueue(ctx context.Context, queue string) error
	List(ctx context.Context, queue string, q worker.ListQuery) (worker.JobPage, error)
	Dead(ctx context.Context, queue string, q worker.DeadQuery) (worker.DeadPage, error)
	Requeue(ctx context.Context, queue string, ids ...string) (int, error)
	RequeueAll(ctx context.Context, queue string) (int, error)
	Purge(ctx context.Context, queue string, ids ...string) (int, error)
	PurgeAll(ctx context.Context, queue string) (int, error)
	RequeueDead(ctx context.Context, queue string, sel worker.DeadSelection, opt worker.TriageOptions) (worker.TriageResult, error)
	PurgeDead(ctx context.Context, queue string, sel worker.DeadSelection, opt worker.TriageOptions) (worker.TriageResult, error)
}

var (
	_ jobClient = (*worker.Client)(nil)
	_ jobClient = (*Client)(nil)
)

package ui_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/ui"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// wantFlash fails the test unless p shows a flash of kind holding text.
func wantFlash(t *testing.T, p page, kind, text string) {
	t.Helper()
	if got := html.UnescapeString(p.flash(t, kind)); !strings.Contains(got, text) {
		t.Fatalf("%s flash %q lacks %q", kind, got, text)
	}
}

func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"})
	br := b.login(adminSecret)
	br.get("/ui/queues/q").want(t, http.StatusOK, `id="pause"`, `id="running"`)

	p := br.submit("/ui/queues/q/pause", url.Values{"back": {"/ui/queues/q"}})
	wantFlash(t, p, "ok", "Paused queue q")
	p.want(t, http.StatusOK, `id="resume"`, `id="paused"`)
	if s, err := b.client.Stats(t.Context(), "q"); err != nil || !s.Paused {
		t.Fatalf("after pause: paused %v, err %v", s.Paused, err)
	}
	// The flash is shown once.
	if strings.Contains(br.get("/ui/queues/q").body, `class="flash ok"`) {
		t.Fatal("the flash is shown again")
	}

	p = br.submit("/ui/queues/q/resume", url.Values{})
	wantFlash(t, p, "ok", "Resumed queue q")
	if s, err := b.client.Stats(t.Context(), "q"); err != nil || s.Paused {
		t.Fatalf("after resume: paused %v, err %v", s.Paused, err)
	}
}

func TestProducerMayEnqueueAndCancelOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.kill("q", nil, "dead-1")
	b.enqueue(worker.JobSpec{Queue: "q", ID: "later", Delay: time.Hour})
	br := b.login(producerSecret)

	p := br.get("/ui/queues/q").want(t, http.StatusOK, `id="enqueue-submit"`, `<span class="role" id="role">producer</span>`)
	if strings.Contains(p.body, `id="pause"`) {
		t.Fatal("a producer is shown the pause button")
	}
	p = br.get("/ui/queues/q?state=dead").want(t, http.StatusOK, `id="limited"`)
	for _, id := range []string{`id="requeue-all"`, `id="purge-all"`, `id="purge-selected"`, `data-job-id="dead-1"`} {
		if strings.Contains(p.body, id) {
			t.Fatalf("a producer is shown %s", id)
		}
	}
	p = br.get("/ui/queues/q/jobs/dead-1").want(t, http.StatusOK, `id="payload"`)
	if strings.Contains(p.body, `id="requeue"`) || strings.Contains(p.body, `id="purge"`) {
		t.Fatal("a producer is shown a dead job's triage buttons")
	}

	// The server-side check is the API's.
	p = br.submit("/ui/queues/q/pause", url.Values{})
	wantFlash(t, p, "error", `token "shop" has the producer role`)
	p = br.submit("/ui/queues/q/purge", url.Values{"confirm": {"yes"}, "scope": {"all"}})
	wantFlash(t, p, "error", "needs admin")
	br.submit("/ui/queues/q/purge", url.Values{"scope": {"all"}}).want(t, http.StatusForbidden, "needs admin")
	p = br.submit("/ui/queues/q/requeue", url.Values{"id": {"dead-1"}})
	wantFlash(t, p, "error", "needs admin")
	if s, err := b.client.Stats(t.Context(), "q"); err != nil || s.Paused || s.Dead != 1 {
		t.Fatalf("after a producer's refused actions: %+v, err %v", s, err)
	}

	p = br.submit("/ui/queues/q/enqueue", url.Values{"payload": {`{"n": 2}`}, "id": {"mine"}})
	wantFlash(t, p, "ok", "Enqueued job mine")
	b.job("q", "mine")
	p = br.submit("/ui/queues/q/cancel", url.Values{"id": {"later"}})
	wantFlash(t, p, "ok", "Cancelled job later")
	if j, err := b.client.Get(t.Context(), "q", "later"); err != nil || j.State != worker.StateCancelled {
		t.Fatalf("the cancelled job: %+v, %v; want it cancelled", j, err)
	}
}

// TestCancelMovesARunningJobToCancelled: the job page cancels a running
// job, which is then shown cancelled, with requeue and purge; the
// cancelled tab lists it, and its requeue and purge go to the cancelled
// jobs' routes.
func TestCancelMovesARunningJobToCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	started := make(chan struct{}, 1)
	b.serve("q", worker.HandlerFunc(func(ctx context.Context, _ *worker.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}))
	b.enqueue(worker.JobSpec{Queue: "q", ID: "long"})
	select {
	case <-started:
	case <-time.After(15 * time.Second):
		t.Fatal("the job did not start")
	}
	br := b.login(adminSecret)
	br.get("/ui/queues/q/jobs/long").want(t, http.StatusOK, `id="cancel"`, "started by")
	br.get("/ui/queues/q?state=active").want(t, http.StatusOK, `data-job-id="long"`)
	p := br.submit("/ui/queues/q/cancel", url.Values{"id": {"long"}, "back": {"/ui/queues/q/jobs/long"}})
	wantFlash(t, p, "ok", "Cancelled job long")
	p.want(t, http.StatusOK, `id="job-state-name">cancelled<`, `id="requeue"`, `id="purge"`, `name="set" value="cancelled"`)
	if j := b.job("q", "long"); j.State != worker.StateCancelled {
		t.Fatalf("cancelled job is %s", j.State)
	}
	br.get("/ui/queues/q?state=cancelled").want(t, http.StatusOK, `data-job-id="long"`, `id="tab-cancelled"`, `Cancelled at`)
	p = br.submit("/ui/queues/q/purge", url.Values{"id": {"long"}, "scope": {"selected"}, "set": {"cancelled"}})
	p.want(t, http.StatusOK, "Purge cancelled jobs of q", `id="purge-count">1<`)
	p = br.submit("/ui/queues/q/requeue", url.Values{"id": {"long"}, "scope": {"selected"}, "set": {"cancelled"}})
	wantFlash(t, p, "ok", "Requeued 1 cancelled job")
}

func TestRequeue(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.kill("q", map[string]string{"a": "timeout talking to A", "b": "Timeout talking to B", "c": "bad input"}, "a", "b", "c", "d")
	br := b.login(adminSecret)
	br.get("/ui/queues/q?state=dead").want(t, http.StatusOK, `id="select-all"`, `id="requeue-selected"`)

	p := br.submit("/ui/queues/q/requeue", url.Values{"scope": {"selected"}, "id": {"a", "d"}})
	wantFlash(t, p, "ok", "Requeued 2 dead jobs")
	for id, want := range map[string]worker.State{"a": worker.StateReady, "d": worker.StateReady, "b": worker.StateDead, "c": worker.StateDead} {
		if j := b.job("q", id); j.State != want {
			t.Fatalf("job %s is %s, want %s", id, j.State, want)
		}
	}
	// Nothing selected: nothing done.
	wantFlash(t, br.submit("/ui/queues/q/requeue", url.Values{"scope": {"selected"}}), "error", "Select the dead jobs")

	// All matching the filter, from the filtered page.
	p = br.get("/ui/queues/q?state=dead&error=timeout").want(t, http.StatusOK, `data-job-id="b"`)
	if strings.Contains(p.body, `data-job-id="c"`) {
		t.Fatal("the filter shows job c")
	}
	p = br.submit("/ui/queues/q/requeue", url.Values{"scope": {"all"}, "error": {"timeout"}})
	wantFlash(t, p, "ok", "Requeued 1 dead job")
	if p.url.RawQuery != "error=timeout&state=dead" {
		t.Fatalf("back at %s", p.url)
	}
	if j := b.job("q", "b"); j.State != worker.StateReady {
		t.Fatalf("job b is %s", j.State)
	}
	if j := b.job("q", "c"); j.State != worker.StateDead {
		t.Fatalf("job c is %s", j.State)
	}
}

func TestPurgeNeedsConfirmation(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.kill("q", map[string]string{"c": "bad input"}, "a", "b", "c")
	br := b.login(adminSecret)
	br.get("/ui/queues/q?state=dead")

	// The purge button leads to the confirmation with a dry run's count.
	p := br.submit("/ui/queues/q/purge", url.Values{"scope": {"all"}})
	p.want(t, http.StatusOK, `<strong id="purge-count">3</strong>`, `id="purge-confirm"`, "Purge 3 jobs")
	br.get("/ui/queues/q/purge?scope=all&error=boom").want(t, http.StatusOK, `<strong id="purge-count">2</strong>`)
	br.get("/ui/queues/q/purge?scope=all&error=nothing").want(t, http.StatusOK, `id="purge-none"`)
	if s, _ := b.client.Stats(t.Context(), "q"); s.Dead != 3 {
		t.Fatalf("%d dead jobs after the dry runs", s.Dead)
	}

	// One from the job's page.
	br.get("/ui/queues/q/jobs/c").want(t, http.StatusOK, `id="purge"`)
	p = br.submit("/ui/queues/q/purge", url.Values{"scope": {"selected"}, "id": {"c"}, "back": {"/ui/queues/q?state=dead"}})
	p.want(t, http.StatusOK, `<strong id="purge-count">1</strong>`, "Purge 1 job<")
	p = br.submit("/ui/queues/q/purge", url.Values{"scope": {"selected"}, "id": {"c"}, "confirm": {"yes"}, "back": {"/ui/queues/q?state=dead"}})
	wantFlash(t, p, "ok", "Purged 1 dead job")
	if _, err := b.client.Get(t.Context(), "q", "c"); err == nil {
		t.Fatal("job c is still there")
	}

	p = br.submit("/ui/queues/q/purge", url.Values{"scope": {"all"}, "confirm": {"yes"}})
	wantFlash(t, p, "ok", "Purged 2 dead jobs")
	if s, _ := b.client.Stats(t.Context(), "q"); s.Dead != 0 {
		t.Fatalf("%d dead jobs after the purge", s.Dead)
	}
}

func TestEnqueueForm(t *testing.T) {
	t.Parallel()
	b := setup(t, config{apiOpts: func(o *api.Options) { o.Limits.MaxPayloadBytes = 1024 }})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "first"})
	br := b.login(adminSecret)
	br.get("/ui/queues/q")

	p := br.submit("/ui/queues/q/enqueue", url.Values{"payload": {"{\r\n  \"order\": 42\r\n}"}, "priority": {"high"},
		"delay": {"1h"}, "unique_key": {"order-42"}, "max_attempts": {"3"}})
	text := html.UnescapeString(p.flash(t, "ok"))
	id := strings.Fields(strings.TrimPrefix(text, "Enqueued job "))[0]
	j := b.job("q", id)
	if string(j.Payload) != `{"order":42}` || j.Priority != worker.PriorityHigh || j.UniqueKey != "order-42" ||
		j.MaxAttempts != 3 || j.State != worker.StateScheduled {
		t.Fatalf("enqueued %+v", j)
	}

	p = br.submit("/ui/queues/q/enqueue", url.Values{"payload": {"plain\r\ntext"}, "id": {"text"}})
	wantFlash(t, p, "ok", "Enqueued job text")
	if j := b.job("q", "text"); string(j.Payload) != "plain\ntext" {
		t.Fatalf("text payload %q", j.Payload)
	}

	// The API's messages, the form kept as filled in.
	for _, tc := range []struct {
		form   url.Values
		status int
		msg    string
	}{
		{url.Values{"priority": {"urgent"}, "payload": {"keep me"}}, http.StatusBadRequest, "priority"},
		{url.Values{"max_attempts": {"many"}}, http.StatusBadRequest, "max_attempts"},
		{url.Values{"delay": {"5"}}, http.StatusBadRequest, "delay"},
		{url.Values{"payload": {strings.Repeat("x", 2000)}}, http.StatusBadRequest, "is 2000 bytes; the limit is 1024"},
		{url.Values{"id": {"first"}}, http.StatusConflict, `already has a job with id "first"`},
	} {
		p := br.submit("/ui/queues/q/enqueue", tc.form)
		p.want(t, tc.status)
		wantFlash(t, p, "error", tc.msg)
		if pl := tc.form.Get("payload"); pl == "keep me" && !strings.Contains(p.body, ">keep me</textarea>") {
			t.Fatalf("the form was not kept: %s", p.body)
		}
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "order/42"})
	br := b.login(adminSecret)
	p := br.get("/ui/queues/q/find?id=order%2F42").want(t, http.StatusOK, `id="payload"`)
	if p.url.EscapedPath() != "/ui/queues/q/jobs/order%2F42" {
		t.Fatalf("found at %s", p.url.EscapedPath())
	}
	p = br.get("/ui/queues/q/find?id=nope").want(t, http.StatusOK)
	wantFlash(t, p, "error", `Queue q has no job "nope"`)
	if p.url.Path != "/ui/queues/q" {
		t.Fatalf("not found: at %s", p.url)
	}
}

// TestActionsAreRateLimited: the API's rate limit holds for the UI's
// actions, which are its requests.
func TestActionsAreRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, config{apiOpts: func(o *api.Options) { o.RateLimit = worker.RateLimit{N: 1, Per: time.Hour} }})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"})
	br := b.login(adminSecret)
	br.get("/ui/queues/q")
	wantFlash(t, br.submit("/ui/queues/q/pause", url.Values{}), "ok", "Paused")
	wantFlash(t, br.submit("/ui/queues/q/resume", url.Values{}), "error", "rate limit")
	testkit.Eventually(t, time.Second, "still paused", func() bool {
		s, err := b.client.Stats(t.Context(), "q")
		return err == nil && s.Paused
	})
}

// triageAPI is the test API with requeues answered by a canned reply that
// matched more than one request handles, recording the bodies sent.
type triageAPI struct {
	*api.Handler
	mu     sync.Mutex
	bodies []string
}

func (a *triageAPI) ServeAs(w http.ResponseWriter, r *http.Request, p api.Principal) {
	if !strings.HasSuffix(r.URL.Path, "/dead/requeue") {
		a.Handler.ServeAs(w, r, p)
		return
	}
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.bodies = append(a.bodies, string(body))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"action":"requeue","dry_run":false,"matched":10000,"changed":10000,"sample":[],"next_cursor":"cur-1"}`)
}

func TestRequeueOffersToContinue(t *testing.T) {
	t.Parallel()
	fake := &triageAPI{}
	b := setup(t, config{uiOpts: func(o *ui.Options) {
		fake.Handler = o.API.(*api.Handler)
		o.API = fake
	}})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"})
	br := b.login(adminSecret)
	br.get("/ui/queues/q?state=dead")
	p := br.submit("/ui/queues/q/requeue", url.Values{"scope": {"all"}, "error": {"timeout"}})
	wantFlash(t, p, "ok", "Requeued 10,000 dead jobs; more dead jobs match")
	p.want(t, http.StatusOK, `id="continue"`, `name="cursor" value="cur-1"`)
	br.submit("/ui/queues/q/requeue", url.Values{"scope": {"all"}, "error": {"timeout"}, "cursor": {"cur-1"}})
	fake.mu.Lock()
	defer fake.mu.Unlock()
	want := []string{`{"filter":{"error":"timeout"}}`, `{"cursor":"cur-1","filter":{"error":"timeout"}}`}
	if !slices.Equal(fake.bodies, want) {
		t.Fatalf("bodies %q, want %q", fake.bodies, want)
	}
}

func TestLoginThrottled(t *testing.T) {
	t.Parallel()
	b := setup(t, config{apiOpts: func(o *api.Options) { o.FailedAuthLimit = worker.RateLimit{N: 1, Per: time.Hour} }})
	br := b.newBrowser()
	br.post("/ui/login", url.Values{"token": {"wrong-0123456789"}}, false).want(t, http.StatusUnauthorized, "invalid token")
	p := br.post("/ui/login", url.Values{"token": {adminSecret}}, false)
	p.want(t, http.StatusTooManyRequests, `class="flash error"`)
	if strings.Contains(p.header.Get("Set-Cookie"), "courier_session") {
		t.Fatal("a throttled address got a session")
	}
}

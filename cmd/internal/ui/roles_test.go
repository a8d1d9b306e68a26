package ui_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// TestProducerReadsWhatTheAPIShowsIt: a producer token reads through the
// UI what the API gives it (a job by id) and nothing the API refuses it:
// no queue list or stats on the overview, no counts, chart or job lists
// (with their errors) on a queue's page in any state, no fleet, locks or
// periodic schedules, no purge confirmation. Each refusal is the API's
// own message.
func TestProducerReadsWhatTheAPIShowsIt(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.kill("secretq", map[string]string{"dead-1": "secret-error-text"}, "dead-1")
	b.enqueue(worker.JobSpec{Queue: "secretq", ID: "ready-1", Payload: []byte("secret-payload")},
		worker.JobSpec{Queue: "secretq", ID: "later-1", Delay: time.Hour})
	br := b.login(producerSecret)

	p := br.get("/ui/").want(t, http.StatusOK, `id="limited"`, `id="open-queue"`)
	for _, leak := range []string{"secretq", `id="counts"`, `href="/ui/fleet"`, `href="/ui/locks"`, `href="/ui/periodic"`} {
		if strings.Contains(p.body, leak) {
			t.Errorf("the producer's overview shows %s:\n%s", leak, p.body)
		}
	}
	for _, state := range []string{"", "ready", "scheduled", "active", "dead", "completed"} {
		path := "/ui/queues/secretq"
		if state != "" {
			path += "?state=" + state
		}
		p := br.get(path).want(t, http.StatusOK, `id="limited"`, `id="enqueue-form"`, `id="find-id"`)
		if msg := html.UnescapeString(p.body); !strings.Contains(msg, `Token "shop" has the producer role; GET /v1/queues/{queue} needs admin.`) {
			t.Errorf("%s does not say why with the API's message:\n%s", path, p.body)
		}
		for _, leak := range []string{"queue-counts", "data-job-id", "secret-error-text", "dead-1", "ready-1", "later-1", `id="tab-`} {
			if strings.Contains(p.body, leak) {
				t.Errorf("%s shows a producer %s:\n%s", path, leak, p.body)
			}
		}
	}
	for _, path := range []string{"/ui/fleet", "/ui/locks", "/ui/periodic", "/ui/queues/secretq/purge?scope=all"} {
		p := br.get(path).want(t, http.StatusForbidden, "has the producer role")
		if strings.Contains(p.body, "secretq</a>") || strings.Contains(p.body, "dead-1") {
			t.Errorf("%s shows a producer the queue's data:\n%s", path, p.body)
		}
	}

	// What the API gives a producer, the UI does: a job by id (with its
	// error, as GET /v1/queues/{queue}/jobs/{id} has it), find, open.
	br.get("/ui/queues/secretq/jobs/dead-1").want(t, http.StatusOK, "secret-error-text")
	if p := br.get("/ui/queues/secretq/find?id=ready-1"); p.url.Path != "/ui/queues/secretq/jobs/ready-1" {
		t.Errorf("find went to %s", p.url)
	}
	if p := br.get("/ui/open?" + url.Values{"queue": {"secretq"}}.Encode()); p.url.Path != "/ui/queues/secretq" {
		t.Errorf("open went to %s", p.url)
	}

	// An admin sees it all; an admin limited to another queue is refused
	// this one with the API's message.
	admin := b.login(adminSecret)
	admin.get("/ui/").want(t, http.StatusOK, `data-queue="secretq"`, `href="/ui/fleet"`)
	admin.get("/ui/queues/secretq?state=dead").want(t, http.StatusOK, "secret-error-text", "queue-counts")
	admin.get("/ui/fleet").want(t, http.StatusOK)
	limited := b.login(limitedSecret)
	p = limited.get("/ui/queues/secretq/jobs/dead-1").want(t, http.StatusForbidden)
	if msg := html.UnescapeString(p.body); !strings.Contains(msg, `Token "billing" may not use queue "secretq" (it is limited to billing).`) {
		t.Errorf("the limited token's refusal is not the API's:\n%s", p.body)
	}
}

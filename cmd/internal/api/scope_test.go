package api

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// Secrets of the tokens limited to queues.
const (
	limitedProducerSecret = "limited-producer-0123456789"
	limitedAdminSecret    = "limited-admin-0123456789"
)

// TestTokenQueues: a token limited to some queues gets 403 on a route of
// any other (a producer's cancel included), changing nothing, and GET
// /v1/queues shows it only its own; a token without a list sees every
// queue.
func TestTokenQueues(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		o.Tokens = append(o.Tokens,
			Token{Name: "mailer", Secret: limitedProducerSecret, Role: RoleProducer, Queues: []string{"sms", "emails"}},
			Token{Name: "mail-ops", Secret: limitedAdminSecret, Role: RoleAdmin, Queues: []string{"emails"}})
	})
	b.kill("billing", "d")
	b.kill("emails", "d")
	b.enqueue(worker.JobSpec{Queue: "billing", ID: "b"}, worker.JobSpec{Queue: "sms", ID: "s"})

	// Within its queues, a limited token works as any other.
	b.want(b.do("POST", "/v1/queues/emails/jobs", limitedProducerSecret, `{"id": "e"}`), 201)
	b.want(b.do("GET", "/v1/queues/sms/jobs/s", limitedProducerSecret, ""), 200)
	b.want(b.do("GET", "/v1/queues/emails/jobs?state=dead", limitedAdminSecret, ""), 200)
	b.want(b.do("DELETE", "/v1/queues/emails/jobs/e", limitedProducerSecret, ""), 204)

	before := b.snapshot()
	refused := []struct{ method, path, body string }{
		{"POST", "/v1/queues/billing/jobs", `{"id": "x"}`},
		{"POST", "/v1/queues/billing/jobs/batch", `{"jobs": [{}]}`},
		{"GET", "/v1/queues/billing/jobs/b", ""},
		{"DELETE", "/v1/queues/billing/jobs/b", ""},
		{"GET", "/v1/queues/billing", ""},
		{"DELETE", "/v1/queues/billing", ""},
		{"GET", "/v1/queues/billing/jobs?state=dead", ""},
		{"POST", "/v1/queues/billing/pause", ""},
		{"POST", "/v1/queues/billing/resume", ""},
		{"GET", "/v1/queues/billing/keys", ""},
		{"GET", "/v1/queues/billing/keys/acme", ""},
		{"PUT", "/v1/queues/billing/keys/acme", `{"concurrency": 1}`},
		{"DELETE", "/v1/queues/billing/keys/acme", ""},
		{"POST", "/v1/queues/billing/dead/requeue", ""},
		{"POST", "/v1/queues/billing/dead/purge", `{"ids": ["d"]}`},
		{"POST", "/v1/queues/billing/dead/purge", ""},
		{"POST", "/v1/queues/billing/cancelled/requeue", ""},
		{"POST", "/v1/queues/billing/cancelled/purge", `{"ids": ["c"]}`},
	}
	// Every route on a queue is in the list: one added to the table must be
	// added here too, and one whose queue is not named {queue} (so run does
	// not check it) fails.
	tried := map[string]bool{}
	for _, rt := range refused {
		_, pattern := b.h.mux.Handler(httptest.NewRequest(rt.method, rt.path, nil))
		tried[pattern] = true
	}
	for _, rt := range b.h.routes {
		if strings.HasPrefix(rt.path, "/v1/queues/") && !tried[rt.method+" "+rt.path] {
			t.Errorf("%s %s is not tried with a token limited to other queues", rt.method, rt.path)
		}
	}
	for _, rt := range refused {
		r := b.want(b.do(rt.method, rt.path, limitedAdminSecret, rt.body), http.StatusForbidden)
		want := `token "mail-ops" may not use queue "billing" (it is limited to emails)`
		if e := r.apiErr(t); e.Code != wire.CodeForbidden || e.Field != "queue" || e.Message != want {
			t.Errorf("%s %s: %+v, want %q", rt.method, rt.path, e, want)
		}
	}
	// A producer may cancel, but only in its queues.
	for _, rt := range []struct{ method, path, body string }{
		{"POST", "/v1/queues/billing/jobs", `{}`},
		{"DELETE", "/v1/queues/billing/jobs/b", ""},
	} {
		r := b.want(b.do(rt.method, rt.path, limitedProducerSecret, rt.body), http.StatusForbidden)
		if e := r.apiErr(t); e.Field != "queue" || e.Message != `token "mailer" may not use queue "billing" (it is limited to emails, sms)` {
			t.Errorf("%s %s: error %+v", rt.method, rt.path, e)
		}
	}
	if !maps.Equal(b.snapshot(), before) {
		t.Error("a refused request changed Redis")
	}

	// The list shows a limited token its own queues only.
	names := func(secret string) string {
		var list struct{ Queues []wire.Queue }
		b.want(b.do("GET", "/v1/queues", secret, ""), 200).json(t, &list)
		var out []string
		for _, q := range list.Queues {
			out = append(out, q.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(limitedAdminSecret); got != "emails" {
		t.Errorf("a token limited to emails lists %q", got)
	}
	if got := names(adminSecret); got != "billing,emails,sms" {
		t.Errorf("an unlimited token lists %q", got)
	}
}

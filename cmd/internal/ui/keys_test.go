package ui_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// keyedQueue fills queue q with waiting jobs of keys acme (3), globex (2)
// and tenant/42 (1), and one without a key, all due in an hour.
func keyedQueue(b *bundle) {
	b.t.Helper()
	var specs []worker.JobSpec
	for key, n := range map[string]int{"acme": 3, "globex": 2, "tenant/42": 1} {
		for i := range n {
			specs = append(specs, worker.JobSpec{Queue: "q", ID: strings.ReplaceAll(key, "/", "-") + "-" + string(rune('a'+i)), Key: key, Delay: time.Hour})
		}
	}
	b.enqueue(append(specs, worker.JobSpec{Queue: "q", ID: "plain", Delay: time.Hour})...)
}

// limitsOf reads key's limits in queue q through the library.
func limitsOf(b *bundle, key string) admin.KeyLimits {
	b.t.Helper()
	s, err := b.client.Key(b.t.Context(), "q", key)
	if err != nil {
		b.t.Fatal(err)
	}
	return s.Limits
}

// TestKeyPages: a queue's page lists its keys with the most waiting jobs,
// linked to each key's page; the keys page lists them and opens a key by
// name; the job lists and a job's page show a job's key; the enqueue form
// takes one. On single Redis and on Cluster, with a partitioned queue.
func TestKeyPages(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, config{rdb: rdb(t)})
			stop := b.serve("q", worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }), worker.QueueOptions{Partitions: 3})
			testkit.Eventually(t, 10*time.Second, "the queue's 3 partitions", func() bool {
				f, err := b.client.Fleet(t.Context(), "q")
				return err == nil && f.Partitions == 3
			})
			stop()
			keyedQueue(b)
			br := b.login(adminSecret)

			p := br.get("/ui/queues/q?state=scheduled").want(t, http.StatusOK, `id="queue-keys"`, `<th>Key`,
				`<tr data-key="acme"><td class="id"><a href="/ui/queues/q/keys/acme">acme</a><td class="n">3<td class="n">0<td class="n">queue&#39;s<td class="n">1<td>queue&#39;s<td>—`,
				`<a href="/ui/queues/q/keys/tenant%2F42">tenant/42</a>`, "3 keys with waiting jobs", `href="/ui/queues/q/keys"`)
			if i, j := strings.Index(p.body, `data-key="acme"`), strings.Index(p.body, `data-key="globex"`); i < 0 || j < i {
				t.Error("the keys are not listed most waiting first")
			}
			// The scheduled jobs' table has a key column, linked.
			if !strings.Contains(p.body, `<td class="id"><a href="/ui/queues/q/keys/globex">globex</a>`) {
				t.Errorf("the job list shows no key:\n%s", p.body)
			}

			br.get("/ui/queues/q/keys").want(t, http.StatusOK, `id="open-key"`, `data-key="acme"`, `data-key="tenant/42"`, "3 keys with waiting jobs.")
			if p := br.get("/ui/queues/q/keys?key=tenant%2F42"); p.url.Path != "/ui/queues/q/keys/tenant/42" || !strings.Contains(p.body, `<code>tenant/42</code>`) {
				t.Errorf("open tenant/42 went to %s", p.url)
			}
			p = br.get("/ui/queues/q/keys?key=a+b").want(t, http.StatusBadRequest)
			if msg := html.UnescapeString(p.flash(t, "error")); !strings.Contains(msg, `Invalid key: "a b" has ' '`) {
				t.Errorf("a bad key's flash: %q", msg)
			}
			br.get("/ui/queues/q/keys/acme").want(t, http.StatusOK, `<span id="key-waiting">3</span>`, `<span id="key-cap">queue&#39;s</span>`,
				`<span id="key-weight-now">1</span>`, `id="key-limits-form"`, `id="key-reset"`)
			br.get("/ui/queues/q/keys/nobody").want(t, http.StatusOK, `<span id="key-waiting">0</span>`)

			br.get("/ui/queues/q/jobs/acme-a").want(t, http.StatusOK, `<dd id="job-key"><a href="/ui/queues/q/keys/acme"><code>acme</code></a>`)
			br.get("/ui/queues/q/jobs/plain").want(t, http.StatusOK, `<dd id="job-key">—`)

			p = br.submit("/ui/queues/q/enqueue", url.Values{"payload": {`{"n": 1}`}, "id": {"from-form"}, "key": {"initech"}, "delay": {"1h"}})
			wantFlash(t, p, "ok", "Enqueued job from-form")
			if j := b.job("q", "from-form"); j.Key != "initech" {
				t.Errorf("the form's job has key %q", j.Key)
			}
			p = br.submit("/ui/queues/q/enqueue", url.Values{"payload": {"x"}, "key": {"a b"}})
			wantFlash(t, p, "error", "invalid key")
			p.want(t, http.StatusBadRequest, `id="enqueue-key" value="a b"`)
		})
	}
}

// TestKeyLimitsForm: the key's page sets its limits through the API (an
// empty field is the default) and resets them; a value the API refuses
// shows the page again with the form as typed and the API's message, and
// changes nothing.
func TestKeyLimitsForm(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	keyedQueue(b)
	br := b.login(adminSecret)
	br.get("/ui/queues/q/keys/acme")

	p := br.submit("/ui/queues/q/limits", url.Values{"key": {"acme"}, "concurrency": {"20"}, "weight": {"3"}, "rate_limit": {"100 per 1m"}})
	wantFlash(t, p, "ok", "Set the limits of key acme: cap 20, weight 3, at most 100 per 1m0s")
	p.want(t, http.StatusOK, `<span id="key-cap">20</span>`, `<span id="key-weight-now">3</span>`, `<span id="key-rate">100 per 1m0s</span>`,
		`id="key-concurrency" value="20"`, `id="key-weight" value="3"`, `id="key-rate-limit" value="100 per 1m0s"`)
	if p.url.Path != "/ui/queues/q/keys/acme" {
		t.Errorf("after the change the browser is at %s", p.url)
	}
	if l := limitsOf(b, "acme"); !reflect.DeepEqual(l, admin.KeyLimits{Concurrency: 20, Weight: 3, RateLimit: &worker.RateLimit{N: 100, Per: time.Minute}}) {
		t.Errorf("after set: %+v", l)
	}
	br.get("/ui/queues/q").want(t, http.StatusOK, `<tr data-key="acme"><td class="id"><a href="/ui/queues/q/keys/acme">acme</a><td class="n">3<td class="n">0<td class="n">20<td class="n">3<td>100 per 1m0s`)

	// Empty fields are the defaults; cap 0 is no cap, rate limit "none" none.
	p = br.submit("/ui/queues/q/limits", url.Values{"key": {"acme"}, "concurrency": {"0"}, "weight": {""}, "rate_limit": {"none"}})
	wantFlash(t, p, "ok", "Set the limits of key acme: no cap, weight 1, no rate limit")
	p.want(t, http.StatusOK, `id="key-rate-limit" value="none"`, `<span id="key-rate">none</span>`)
	if l := limitsOf(b, "acme"); !reflect.DeepEqual(l, admin.KeyLimits{Concurrency: 0, RateLimit: &worker.RateLimit{}}) {
		t.Errorf("after set with cap 0: %+v", l)
	}
	// A key with a slash.
	p = br.submit("/ui/queues/q/limits", url.Values{"key": {"tenant/42"}, "concurrency": {"1"}})
	wantFlash(t, p, "ok", "Set the limits of key tenant/42: cap 1, weight 1, the queue's rate limit")
	if p.url.Path != "/ui/queues/q/keys/tenant/42" || !reflect.DeepEqual(limitsOf(b, "tenant/42"), admin.KeyLimits{Concurrency: 1}) {
		t.Errorf("tenant/42: at %s, limits %+v", p.url, limitsOf(b, "tenant/42"))
	}

	// Refused: the page again, the form as typed, nothing changed.
	for _, tc := range []struct {
		concurrency, weight, rate, want string
	}{
		{"-5", "", "", "Invalid concurrency: must be -1 (the queue&#39;s), 0 (none) or 1 to 1000000 (got -5)"},
		{"", "1001", "", "Invalid weight: must be 0 (the default, 1) or 1 to 1000 (got 1001)"},
		{"lots", "", "", "Invalid concurrency: must be a whole number, not a string"},
		{"", "", "fast", "Invalid rate_limit: expected &#34;N per DURATION&#34;"},
		{"2", "", "0 per 1s", "Invalid rate_limit: must allow at least 1 job per window (got 0)"},
	} {
		p = br.submit("/ui/queues/q/limits", url.Values{"key": {"acme"}, "concurrency": {tc.concurrency}, "weight": {tc.weight}, "rate_limit": {tc.rate}})
		p.want(t, http.StatusBadRequest, tc.want, `id="key-concurrency" value="`+tc.concurrency+`"`, `id="key-weight" value="`+tc.weight+`"`,
			`id="key-rate-limit" value="`+tc.rate+`"`)
		if l := limitsOf(b, "acme"); !reflect.DeepEqual(l, admin.KeyLimits{Concurrency: 0, RateLimit: &worker.RateLimit{}}) {
			t.Errorf("after a refused change (%+v): %+v", tc, l)
		}
	}
	br.submit("/ui/queues/q/limits", url.Values{"key": {"a b"}, "concurrency": {"1"}}).want(t, http.StatusBadRequest, "Invalid key")

	// Reset, twice alike.
	for range 2 {
		p = br.submit("/ui/queues/q/limits/reset", url.Values{"key": {"acme"}})
		wantFlash(t, p, "ok", "Reset the limits of key acme: the queue's cap, weight 1, the queue's rate limit")
		p.want(t, http.StatusOK, `<span id="key-cap">queue&#39;s</span>`, `id="key-concurrency" value=""`, `id="key-rate-limit" value=""`)
		if l := limitsOf(b, "acme"); !reflect.DeepEqual(l, admin.DefaultKeyLimits) {
			t.Errorf("after reset: %+v", l)
		}
	}
}

// TestKeyPagesRoles: a producer reads no key and changes none, the API's
// refusal shown; an admin limited to another queue is refused this one's
// keys; a POST without the CSRF token changes nothing.
func TestKeyPagesRoles(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	keyedQueue(b)
	want := admin.KeyLimits{Concurrency: 4, Weight: 2, RateLimit: &worker.RateLimit{N: 9, Per: time.Second}}
	if err := b.client.SetKeyLimits(t.Context(), "q", "acme", want); err != nil {
		t.Fatal(err)
	}

	producer := b.login(producerSecret)
	for _, path := range []string{"/ui/queues/q/keys", "/ui/queues/q/keys/acme", "/ui/queues/q/keys?key=acme"} {
		p := producer.get(path).want(t, http.StatusForbidden)
		if msg := html.UnescapeString(p.body); !strings.Contains(msg, `Token "shop" has the producer role; GET /v1/queues/{queue}/keys`) {
			t.Errorf("%s: the refusal is not the API's:\n%s", path, p.body)
		}
	}
	p := producer.get("/ui/queues/q").want(t, http.StatusOK, `id="enqueue-key"`)
	if strings.Contains(p.body, `id="queue-keys"`) || strings.Contains(p.body, "data-key=") {
		t.Error("a producer's queue page shows the keys")
	}
	// A producer reads a job by id, its key too, but is not led to the key.
	p = producer.get("/ui/queues/q/jobs/acme-a").want(t, http.StatusOK, `<dd id="job-key"><code>acme</code>`)
	if strings.Contains(p.body, `href="/ui/queues/q/keys/acme"`) {
		t.Error("a producer's job page links to the key's page")
	}
	producer.submit("/ui/queues/q/limits", url.Values{"key": {"acme"}, "concurrency": {"1"}}).want(t, http.StatusForbidden, "needs admin")
	producer.submit("/ui/queues/q/limits/reset", url.Values{"key": {"acme"}}).want(t, http.StatusForbidden, "needs admin")

	limited := b.login(limitedSecret)
	p = limited.get("/ui/queues/q/keys/acme").want(t, http.StatusForbidden)
	if msg := html.UnescapeString(p.body); !strings.Contains(msg, `Token "billing" may not use queue "q"`) {
		t.Errorf("the limited token's refusal is not the API's:\n%s", p.body)
	}
	limited.get("/ui/queues/billing/keys")
	limited.submit("/ui/queues/q/limits", url.Values{"key": {"acme"}, "concurrency": {"1"}}).want(t, http.StatusForbidden, `may not use queue`)

	admin := b.login(adminSecret)
	admin.get("/ui/queues/q/keys/acme")
	for _, csrf := range []string{"", admin.csrf + "x"} {
		form := url.Values{"key": {"acme"}, "concurrency": {"1"}}
		if csrf != "" {
			form.Set("csrf", csrf)
		}
		admin.post("/ui/queues/q/limits", form, false).want(t, http.StatusForbidden, "CSRF")
		admin.post("/ui/queues/q/limits/reset", url.Values{"key": {"acme"}, "csrf": {csrf}}, false).want(t, http.StatusForbidden)
	}
	if l := limitsOf(b, "acme"); !reflect.DeepEqual(l, want) {
		t.Errorf("after refused changes: %+v, want %+v", l, want)
	}
}

// TestKeyHeldBack: a key whose handler said its downstream takes no more
// work (worker.KeyLimited) shows until when on its page.
func TestKeyHeldBack(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.serve("q", worker.HandlerFunc(func(context.Context, *worker.Job) error { return worker.KeyLimited(time.Hour) }))
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a", Key: "acme"})
	testkit.Eventually(t, 15*time.Second, "key acme held back", func() bool {
		s, err := b.client.Key(t.Context(), "q", "acme")
		return err == nil && !s.LimitedUntil.IsZero()
	})
	br := b.login(adminSecret)
	p := br.get("/ui/queues/q/keys/acme").want(t, http.StatusOK, `<span id="key-limited">`, `<span id="key-waiting">1</span>`)
	if !strings.Contains(p.body, "in 59m") {
		t.Errorf("the page does not say the key is held back for about an hour:\n%s", p.body)
	}
	if strings.Contains(br.get("/ui/queues/q/keys/globex").want(t, http.StatusOK).body, `id="key-limited"`) {
		t.Error("a key never held back shows a limit")
	}
}

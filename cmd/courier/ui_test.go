package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// hookServer is the webhook receiver of the UI's tests: a job whose
// payload says "block" is held until the daemon gives up on it (a job to
// cancel while it runs), one that says "fail" is refused with a 400 whose
// body holds markup while failing is set, one that says "invalid" is
// refused with a 422 (the dead job of the dead set's screenshot), and
// every other is taken.
type hookServer struct {
	srv     *httptest.Server
	failing atomic.Bool

	mu        sync.Mutex
	delivered map[string]int // job id → deliveries answered 200
	blocked   map[string]bool
	cancelled map[string]bool // blocked requests the daemon gave up on
}

func newHookServer(t *testing.T) *hookServer {
	h := &hookServer{delivered: map[string]int{}, blocked: map[string]bool{}, cancelled: map[string]bool{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := r.Header.Get("Courier-Job-Id")
		switch {
		case strings.Contains(string(body), "block"):
			h.mu.Lock()
			h.blocked[id] = true
			h.mu.Unlock()
			select {
			case <-r.Context().Done():
				h.mu.Lock()
				h.cancelled[id] = true
				h.mu.Unlock()
			case <-time.After(time.Minute):
			}
			return
		case strings.Contains(string(body), "fail") && h.failing.Load():
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `<script>window.__pwned = "error"</script> refused`)
			return
		case strings.Contains(string(body), "invalid"):
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `email address rejected`)
			return
		}
		h.mu.Lock()
		h.delivered[id]++
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// seen reports what the receiver knows of job id.
func (h *hookServer) seen(id string) (delivered int, blocked, cancelled bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivered[id], h.blocked[id], h.cancelled[id]
}

// uiConfig runs a log queue (mail), a webhook queue whose jobs die at
// their first failure and that runs one job of a key at a time (hooks), a
// log queue with a periodic job (ticks), a
// log queue that retains its completed jobs (kept), and the UI with an
// admin and a producer token, refreshing every second.
func uiConfig(addr, prefix, hookURL string) string {
	return fmt.Sprintf(`
redis: {addr: [%q], prefix: %s}
http: {addr: 127.0.0.1:0}
ui: {refresh: 1s}
admin:
  tokens:
    - {name: shop, token: %s, role: producer}
    - {name: ops, token: %s, role: admin}
queues:
  mail: {handler: log, concurrency: 2}
  kept: {handler: log, retain_completed: {count: 100}}
  ticks:
    handler: log
    periodic:
      heartbeat: {every: 2s, payload: '{"tick": true}'}
  hooks:
    handler: webhook
    concurrency: 2
    max_attempts: 1
    key_concurrency: 1
    webhook:
      url: %s
      allow_networks: [127.0.0.0/8]
      secret: ui-test-webhook-secret-0123456789
      timeout: 60s
`, addr, prefix, testProducerToken, testAdminToken, hookURL)
}

var uiURLRE = regexp.MustCompile(`msg="web UI" url=(http://127\.0\.0\.1:\d+/ui/)`)

// TestUIInBrowser drives the web UI of a courier run in headless Chromium,
// as an operator would: log in, watch counts move, pause, cancel, requeue,
// and the attacks it must refuse. The steps share one daemon and one
// browser and run in order. With COURIER_UI_SCREENSHOTS set to a
// directory (make screenshots), it also writes a screenshot of each page
// there.
func TestUIInBrowser(t *testing.T) { //nolint:tparallel // the steps share one daemon and one browser, in order
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes and a browser")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	hooks := newHookServer(t)
	daemon := startCourier(t, nil, "run", "--config", writeConfig(t, uiConfig(addr, prefix, hooks.srv.URL)))
	ui := daemon.waitOutput(uiURLRE, 20*time.Second)
	daemon.waitOutput(regexp.MustCompile(`msg="worker pool started"`), 20*time.Second)
	base := strings.TrimSuffix(ui, "/ui/")
	client := testClient(t, prefix)
	ctx := t.Context()
	b := newBrowser(t)

	enqueue := func(specs ...worker.JobSpec) {
		t.Helper()
		if _, err := client.Enqueue(ctx, specs); err != nil {
			t.Fatal(err)
		}
	}
	stateOf := func(queue, id string) worker.State {
		t.Helper()
		j, err := client.Get(ctx, queue, id)
		if errors.Is(err, worker.ErrNotFound) {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
	// shot writes a screenshot of the page open, as docs/ui-<name>.png
	// under make screenshots.
	shot := func(t *testing.T, name string) {
		t.Helper()
		png := b.screenshot()
		if dir := os.Getenv("COURIER_UI_SCREENSHOTS"); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, "ui-"+name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	pwned := func() string {
		t.Helper()
		return evalJS[string](b, `String(window.__pwned)`)
	}
	count := func(state string) string { return "#queue-counts [data-state=" + state + "]" }

	t.Run("log in", func(t *testing.T) {
		b.open(ui, "#login-token") // sent to the login form
		b.do(10*time.Second, sendKeys("#login-token", "not-a-token-0123456789"))
		b.submit("#login-submit", "#login-token")
		b.waitText(".flash.error", 10*time.Second, "a wrong token", func(s string) bool { return strings.Contains(s, "invalid token") })
		if c := b.cookie("courier_session"); c != nil {
			t.Fatalf("a wrong token got a session cookie: %+v", c)
		}
		b.do(10*time.Second, sendKeys("#login-token", testAdminToken))
		b.submit("#login-submit", "#counts")
		c := b.cookie("courier_session")
		if c == nil || !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Path != "/ui/" {
			t.Fatalf("session cookie %+v; want HttpOnly, SameSite=Strict, Path=/ui/", c)
		}
		if strings.Contains(c.Value, testAdminToken) {
			t.Error("the session cookie holds the token")
		}
		for _, q := range []string{"mail", "hooks", "ticks"} {
			if !b.exists(`#counts [data-queue="` + q + `"]`) {
				t.Errorf("the overview does not list queue %s", q)
			}
		}
	})

	t.Run("counts move and pause stops the workers", func(t *testing.T) {
		b.open(base+"/ui/queues/mail", count("ready"))
		b.submit("#pause", "#paused")
		evalJS[int](b, `window.__marker = 1`)
		enqueue(worker.JobSpec{Queue: "mail", ID: "m1"}, worker.JobSpec{Queue: "mail", ID: "m2"}, worker.JobSpec{Queue: "mail", ID: "m3"})
		b.waitText(count("ready"), 10*time.Second, "the ready count, refreshed live", func(s string) bool { return s == "3" })
		// Paused, the workers claim nothing: the jobs stay ready.
		time.Sleep(1500 * time.Millisecond) //nolint:forbidigo // the daemon must have had the time to claim
		if st := stateOf("mail", "m1"); st != worker.StateReady {
			t.Fatalf("job m1 of the paused queue is %s", st)
		}
		b.submit("#resume", "#running")
		evalJS[int](b, `window.__marker = 1`)
		b.waitText(count("ready"), 15*time.Second, "the ready count after the resume", func(s string) bool { return s == "0" })
		if evalJS[int](b, `window.__marker`) != 1 {
			t.Error("the page reloaded: the counts were not refreshed in place")
		}
	})

	t.Run("cancel a running job", func(t *testing.T) {
		enqueue(worker.JobSpec{Queue: "hooks", ID: "long", Payload: []byte(`{"block": true}`)})
		testkit.Eventually(t, 15*time.Second, "job long runs", func() bool { _, blocked, _ := hooks.seen("long"); return blocked })
		b.open(base+"/ui/queues/hooks/jobs/long", "#cancel")
		if s := b.text("#job-state-name"); s != "active" {
			t.Errorf("the job page says %q; want active", s)
		}
		b.submit("#cancel", ".flash.ok")
		testkit.Eventually(t, 15*time.Second, "the webhook call of job long ends", func() bool { _, _, c := hooks.seen("long"); return c })
		if st := stateOf("hooks", "long"); st != worker.StateCancelled {
			t.Errorf("the cancelled job is %s; want cancelled", st)
		}
		// The cancelled tab lists it, apart from the dead jobs.
		b.open(base+"/ui/queues/hooks?state=cancelled", `tr[data-job-id="long"]`)
		if s := b.text(`#tab-cancelled .count`); s != "1" {
			t.Errorf("the cancelled tab's count reads %q; want 1", s)
		}
	})

	t.Run("requeue a dead job and see it run", func(t *testing.T) {
		hooks.failing.Store(true)
		enqueue(worker.JobSpec{Queue: "hooks", ID: "bad", Payload: []byte(`{"fail": true}`)})
		testkit.Eventually(t, 15*time.Second, "job bad dies", func() bool { return stateOf("hooks", "bad") == worker.StateDead })
		b.open(base+"/ui/queues/hooks?state=dead", `tr[data-job-id="bad"]`)
		if s := b.text(`tr[data-job-id="bad"]`); !strings.Contains(s, "<script>") {
			t.Errorf("the dead row does not show the error's markup as text: %q", s)
		}
		if v := pwned(); v != "undefined" {
			t.Fatalf("the error's script ran: window.__pwned = %s", v)
		}
		hooks.failing.Store(false)
		b.open(base+"/ui/queues/hooks/jobs/bad", "#requeue")
		b.submit("#requeue", ".flash.ok")
		testkit.Eventually(t, 15*time.Second, "job bad is delivered", func() bool { n, _, _ := hooks.seen("bad"); return n == 1 })
	})

	t.Run("a script payload stays inert", func(t *testing.T) {
		payload := `<script>window.__pwned = "payload"</script><img src=x onerror="window.__pwned = 'img'">`
		if err := client.Pause(ctx, "inert"); err != nil {
			t.Fatal(err)
		}
		enqueue(worker.JobSpec{Queue: "inert", ID: "xss", Payload: []byte(payload)})
		b.open(base+"/ui/queues/inert/jobs/xss", "#payload")
		if s := b.text("#payload"); !strings.Contains(s, `<script>window.__pwned = "payload"</script>`) {
			t.Errorf("the payload is not shown as text: %q", s)
		}
		b.open(base+"/ui/queues/inert", `tr[data-job-id="xss"]`)
		if v := pwned(); v != "undefined" {
			t.Fatalf("the payload's script ran: window.__pwned = %s", v)
		}
	})

	t.Run("a POST without the CSRF token is refused", func(t *testing.T) {
		b.open(base+"/ui/queues/mail", "#pause")
		for _, body := range []string{"", "csrf=forged"} {
			status := evalJS[int](b, `fetch('/ui/queues/mail/pause', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: `+
				jsString(body)+`}).then(r => r.status)`)
			if status != http.StatusForbidden {
				t.Errorf("POST pause with body %q: status %d; want 403", body, status)
			}
		}
		if st, err := client.Stats(ctx, "mail"); err != nil || st.Paused {
			t.Errorf("the refused POSTs paused the queue: %+v, %v", st, err)
		}
	})

	t.Run("a job's headers, its progress, then its result", func(t *testing.T) {
		// No built-in handler reports progress or sets a result: a daemon
		// of this test's, on the same Redis and prefix, serves queue
		// reports, and the courier run under test shows it.
		release := make(chan struct{})
		// A short lease, so that a progress report is stored within 200ms.
		serveInProcess(t, worker.Config{Prefix: prefix, Lease: 600 * time.Millisecond, PollInterval: 50 * time.Millisecond}, "reports", worker.HandlerFunc(func(ctx context.Context, j *worker.Job) error {
			if err := j.ReportProgress(60, "resizing <images>"); err != nil {
				return err
			}
			if err := j.SetResult([]byte(`{"resized":12,"skipped":["a.png"]}`)); err != nil {
				return err
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}), worker.QueueOptions{RetainCompleted: worker.Retention{Count: 10}})
		enqueue(worker.JobSpec{Queue: "reports", ID: "r1", Payload: []byte(`{"album": 7}`), Headers: map[string]string{
			"tenant":      "acme",
			"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			"x-note":      `<script>window.__pwned = "header"</script>`,
		}})
		testkit.Eventually(t, 15*time.Second, "job r1 reports its progress", func() bool {
			j, err := client.Get(ctx, "reports", "r1")
			return err == nil && j.Progress != nil
		})
		b.open(base+"/ui/queues/reports/jobs/r1", "#job-progress")
		if s := b.text("#progress-percent"); s != "60%" {
			t.Errorf("the progress percent reads %q; want 60%%", s)
		}
		if v := evalJS[float64](b, `document.querySelector('#job-progress progress').value`); v != 60 {
			t.Errorf("the progress bar is at %v; want 60", v)
		}
		if s := b.text("#job-progress"); !strings.Contains(s, "resizing <images>") || !strings.Contains(s, "updated ") {
			t.Errorf("the progress reads %q; want its message and age", s)
		}
		for name, want := range map[string]string{
			"tenant":      "acme",
			"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			"x-note":      `<script>window.__pwned = "header"</script>`,
		} {
			if s := b.text(`#headers tr[data-header="` + name + `"]`); !strings.Contains(s, name) || !strings.Contains(s, want) {
				t.Errorf("the header row of %s reads %q; want %q", name, s, want)
			}
		}
		if v := pwned(); v != "undefined" {
			t.Fatalf("a header's script ran: window.__pwned = %s", v)
		}
		shot(t, "job-progress")
		b.open(base+"/ui/queues/reports?state=active", `tr[data-job-id="r1"]`)
		if s := b.text(`tr[data-job-id="r1"] .pct`); s != "60%" {
			t.Errorf("the active row's progress reads %q; want 60%%", s)
		}
		// The job ends while its page is open: the live refresh brings the
		// result.
		b.open(base+"/ui/queues/reports/jobs/r1", "#job-progress")
		close(release)
		b.waitText("#job-state-name", 15*time.Second, "the job's state, refreshed live", func(s string) bool { return s == "completed" })
		if s := b.text("#result"); !strings.Contains(s, `"resized": 12`) || !strings.Contains(s, `"a.png"`) {
			t.Errorf("the result reads %q; want it indented", s)
		}
		if b.exists("#job-progress") {
			t.Error("a completed job's page shows a progress")
		}
		// The buttons are outside the live regions: a new load drops Cancel.
		b.open(base+"/ui/queues/reports/jobs/r1", "#result")
		if b.exists("#cancel") {
			t.Error("a completed job's page offers to cancel it")
		}
		b.open(base+"/ui/queues/reports?state=completed", `tr[data-job-id="r1"]`)
		if s := b.text(`tr[data-job-id="r1"]`); !strings.Contains(s, `{"resized":12,"skipped":["a.png"]}`) {
			t.Errorf("the completed row reads %q; want the result's preview", s)
		}
	})

	t.Run("a queue retains its completed jobs", func(t *testing.T) {
		enqueue(worker.JobSpec{Queue: "kept", ID: "k1", Payload: []byte(`{"kept": true}`)})
		testkit.Eventually(t, 15*time.Second, "job k1 completes", func() bool { return stateOf("kept", "k1") == worker.StateCompleted })
		b.open(base+"/ui/queues/kept", "#tab-completed")
		if s := b.text(count("completed")); s != "1" {
			t.Errorf("the completed count reads %q; want 1", s)
		}
		b.submit("#tab-completed", `tr[data-job-id="k1"]`) // a link, not a form, but it leads to a new page all the same
		b.open(base+"/ui/queues/kept/jobs/k1", "#result")
		if s := b.text("#job-state-name"); s != "completed" {
			t.Errorf("the job page says %q; want completed", s)
		}
		if s := b.text("#finished-at"); s == "" || s == "—" {
			t.Errorf("the job page's finish time reads %q", s)
		}
		if s := b.text("#result"); s != "The handler set no result." {
			t.Errorf("the result of a log job reads %q", s)
		}
	})

	t.Run("screenshots", func(t *testing.T) {
		// The dead set's picture shows a dead job and its error.
		enqueue(worker.JobSpec{Queue: "hooks", ID: "signup-42", Payload: []byte(`{"email": "invalid"}`)})
		testkit.Eventually(t, 15*time.Second, "job signup-42 dies", func() bool { return stateOf("hooks", "signup-42") == worker.StateDead })
		pages := []struct{ name, path, sel string }{
			{"overview", "/ui/", "#counts"},
			{"queue", "/ui/queues/mail", "#queue-counts"},
			{"dead", "/ui/queues/hooks?state=dead", `tr[data-job-id="signup-42"]`},
			{"job", "/ui/queues/hooks/jobs/long", "#payload"},
			{"periodic", "/ui/periodic", "main"},
			{"fleet", "/ui/fleet", "main"},
			{"locks", "/ui/locks", "main"},
		}
		for _, p := range pages {
			b.open(base+p.path, p.sel)
			shot(t, p.name)
		}
	})

	t.Run("job kinds: served, not served, and an enqueue that warns", func(t *testing.T) {
		// A daemon of this test's serves one kind of queue kinded; the
		// queue is paused, so that its jobs stay listed.
		if err := client.Pause(ctx, "kinded"); err != nil {
			t.Fatal(err)
		}
		nop := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
		serveInProcess(t, worker.Config{Prefix: prefix, PollInterval: 50 * time.Millisecond}, "kinded", worker.Kinds{"email.send": nop}, worker.QueueOptions{})
		enqueue(worker.JobSpec{Queue: "kinded", ID: "sent", Kind: "email.send"}, worker.JobSpec{Queue: "kinded", ID: "typo", Kind: "emial.send"})
		testkit.Eventually(t, 15*time.Second, "the daemon reports the kinds it serves", func() bool {
			f, err := client.Fleet(ctx, "kinded")
			return err == nil && len(f.Processes) == 1 && len(f.Processes[0].Kinds) == 1
		})
		b.open(base+"/ui/queues/kinded", "#kinds-served")
		if s := b.text("#kinds-served"); !strings.Contains(s, "email.send") {
			t.Errorf("the kinds served read %q; want email.send", s)
		}
		if b.exists(`tr[data-job-id="sent"] .unserved`) || !b.exists(`tr[data-job-id="typo"] .unserved`) {
			t.Errorf("rows %q and %q: want only the typo's kind marked as not served",
				b.text(`tr[data-job-id="sent"]`), b.text(`tr[data-job-id="typo"]`))
		}
		b.do(10*time.Second, sendKeys("#enqueue-kind", "email.send"), sendKeys("#enqueue-id", "from-form"), sendKeys("#enqueue-payload", `{"to": "ada"}`))
		b.submit("#enqueue-submit", ".flash.ok")
		if b.exists("#flash-warning") {
			t.Errorf("an enqueue of a served kind warns: %q", b.text(".flash.ok"))
		}
		if j, err := client.Get(ctx, "kinded", "from-form"); err != nil || j.Kind != "email.send" {
			t.Fatalf("the form's job: %+v, %v; want kind email.send", j, err)
		}
		b.open(base+"/ui/queues/kinded/jobs/from-form", "#job-kind")
		if s := b.text("#job-kind"); s != "email.send" {
			t.Errorf("the job page's kind reads %q", s)
		}
		b.open(base+"/ui/fleet", `[data-queue="kinded"]`)
		if s := b.text(`[data-queue="kinded"] .kinds`); !strings.Contains(s, "kinds served: email.send") {
			t.Errorf("the fleet's chip of queue kinded reads %q", s)
		}
		// A kind no daemon has ever served: stored, with a warning.
		b.open(base+"/ui/queues/kinded", "#enqueue-submit")
		b.do(10*time.Second, sendKeys("#enqueue-kind", "emial.send"), sendKeys("#enqueue-id", "typo-from-form"), sendKeys("#enqueue-payload", "x"))
		b.submit("#enqueue-submit", "#flash-warning")
		if s := b.text("#flash-warning"); !strings.Contains(s, `no daemon has ever served kind "emial.send" of queue "kinded"`) {
			t.Errorf("the enqueue's flash reads %q; want the warning", s)
		}
		if j, err := client.Get(ctx, "kinded", "typo-from-form"); err != nil || j.Kind != "emial.send" {
			t.Errorf("the warned job: %+v, %v; want it stored", j, err)
		}
	})

	t.Run("job keys: a key at its cap, its page, its limits set and reset", func(t *testing.T) {
		// Queue hooks runs one job of a key at a time (key_concurrency: 1):
		// of two jobs of key acme that block, one runs and one waits.
		enqueue(worker.JobSpec{Queue: "hooks", ID: "acme-1", Key: "acme", Payload: []byte(`{"block": true}`)},
			worker.JobSpec{Queue: "hooks", ID: "acme-2", Key: "acme", Payload: []byte(`{"block": true}`)})
		blocked := func(id string) bool { _, b, _ := hooks.seen(id); return b }
		testkit.Eventually(t, 15*time.Second, "an acme job runs", func() bool { return blocked("acme-1") || blocked("acme-2") })
		row := `#queue-keys tr[data-key="acme"]`
		b.open(base+"/ui/queues/hooks", row)
		b.waitText(row, 15*time.Second, "acme's row, at its cap", func(s string) bool {
			return strings.Join(strings.Fields(s), " ") == "acme 1 1 queue's 1 queue's at cap"
		})
		b.submit(row+" a", "#key-limits-form")
		for sel, want := range map[string]string{"#key-waiting": "1", "#key-running": "1", "#key-cap": "queue's", "#key-at-cap": "yes"} {
			if s := b.text(sel); s != want {
				t.Errorf("the key's page: %s reads %q, want %q", sel, s, want)
			}
		}
		shot(t, "key")
		// A cap of 2: the waiting job starts at once; the page's live
		// refresh shows it.
		evalJS[string](b, `document.querySelector('#key-concurrency').value = '2'`)
		evalJS[string](b, `document.querySelector('#key-weight').value = '3'`)
		b.submit("#key-limits-submit", ".flash.ok")
		if s := b.text(".flash.ok"); !strings.Contains(s, "Set the limits of key acme: cap 2, weight 3") {
			t.Errorf("the flash reads %q", s)
		}
		if st, err := client.Key(ctx, "hooks", "acme"); err != nil || st.Limits != (admin.KeyLimits{Concurrency: 2, Weight: 3}) {
			t.Errorf("after the form: %+v, %v", st, err)
		}
		b.waitText("#key-running", 15*time.Second, "acme's running jobs, refreshed live", func(s string) bool { return s == "2" })
		testkit.Eventually(t, 15*time.Second, "both acme jobs run", func() bool { return blocked("acme-1") && blocked("acme-2") })
		b.submit("#key-reset", ".flash.ok")
		if s := b.text("#key-cap"); s != "queue's" {
			t.Errorf("after the reset the cap reads %q", s)
		}
		if st, err := client.Key(ctx, "hooks", "acme"); err != nil || st.Limits != admin.DefaultKeyLimits {
			t.Errorf("after the reset: %+v, %v", st, err)
		}
		b.open(base+"/ui/queues/hooks/jobs/acme-1", "#job-key a")
		if s := b.text("#job-key"); s != "acme" {
			t.Errorf("the job page's key reads %q", s)
		}
		for _, id := range []string{"acme-1", "acme-2"} {
			if err := client.Cancel(ctx, "hooks", id); err != nil {
				t.Fatal(err)
			}
		}
		// The enqueue form takes a key.
		b.open(base+"/ui/queues/inert", "#enqueue-key")
		b.do(10*time.Second, sendKeys("#enqueue-key", "initech"), sendKeys("#enqueue-id", "keyed-form"), sendKeys("#enqueue-payload", "x"))
		b.submit("#enqueue-submit", ".flash.ok")
		if j, err := client.Get(ctx, "inert", "keyed-form"); err != nil || j.Key != "initech" {
			t.Errorf("the form's job: %+v, %v; want key initech", j, err)
		}
	})

	t.Run("a producer token reads what the API gives it, and cannot purge", func(t *testing.T) {
		hooks.failing.Store(true)
		enqueue(worker.JobSpec{Queue: "hooks", ID: "bad2", Payload: []byte(`{"fail": true}`)})
		testkit.Eventually(t, 15*time.Second, "job bad2 dies", func() bool { return stateOf("hooks", "bad2") == worker.StateDead })
		b.open(base+"/ui/", "#logout")
		b.submit("#logout", "#login-token")
		b.do(10*time.Second, sendKeys("#login-token", testProducerToken))
		b.submit("#login-submit", "#limited")
		if b.exists("#counts") || b.exists(`a[href="/ui/fleet"]`) {
			t.Error("a producer's overview lists the queues or leads to the fleet")
		}
		b.open(base+"/ui/queues/hooks?state=dead", "#limited")
		if b.exists("tr[data-job-id]") || b.exists("#queue-counts") {
			t.Error("a producer is shown the queue's counts or dead jobs")
		}
		if b.exists("#purge") || b.exists("#requeue") {
			t.Error("a producer is offered the purge or requeue buttons")
		}
		b.open(base+"/ui/queues/hooks/jobs/bad2", "#payload") // GET /v1/queues/{queue}/jobs/{id} is a producer's
		if b.exists("#purge") || b.exists("#requeue") {
			t.Error("a producer is offered the purge or requeue buttons of a dead job")
		}
		// The form a producer could forge, with a valid CSRF token: the
		// API's role check refuses it.
		reply := evalJS[string](b, `fetch('/ui/queues/hooks/purge', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'},
			body: new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value, id: 'bad2', confirm: 'yes'})}).then(r => r.status + ' ' + r.url)`)
		page := evalJS[string](b, `fetch('/ui/queues/hooks/purge', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'},
			body: new URLSearchParams({csrf: document.querySelector('input[name=csrf]').value, id: 'bad2', confirm: 'yes'})}).then(r => r.text())`)
		if !strings.Contains(page, "needs admin") {
			t.Errorf("the producer's purge (%s) does not say it needs admin:\n%s", reply, page)
		}
		if st := stateOf("hooks", "bad2"); st != worker.StateDead {
			t.Errorf("after a producer's purge, job bad2 is %q; want still dead", st)
		}
	})
}

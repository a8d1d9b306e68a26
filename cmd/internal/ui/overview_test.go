package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/ui"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// fakeBackend serves n queues with a full hour of busy history each, and
// deterministic counts: what the overview's size is measured on. The
// pages only read: the operator's changes (the embedded nil Operator)
// are never called.
type fakeBackend struct {
	admin.Operator
	n int
}

// Queues pages through queue-000… by their number, the cursor; with
// Only, it keeps those of them that exist.
func (f fakeBackend) Queues(_ context.Context, p admin.QueueListParams) (admin.QueuePage, error) {
	var page admin.QueuePage
	if p.Only != nil {
		for _, name := range p.Only {
			if n, err := strconv.Atoi(strings.TrimPrefix(name, "queue-")); err == nil && n < f.n {
				page.Names = append(page.Names, name)
			}
		}
		return page, nil
	}
	from := 0
	if p.Cursor != "" {
		var err error
		if from, err = strconv.Atoi(p.Cursor); err != nil {
			return admin.QueuePage{}, &worker.ValidationError{Field: "Cursor", Reason: "not a cursor of this listing"}
		}
	}
	for i := from; i < min(from+p.Limit, f.n); i++ {
		page.Names = append(page.Names, fmt.Sprintf("queue-%03d", i))
	}
	if from+p.Limit < f.n {
		page.Next = strconv.Itoa(from + p.Limit)
	}
	return page, nil
}

func (f fakeBackend) QueueCount(context.Context) (int64, error) { return int64(f.n), nil }

func (f fakeBackend) Stats(_ context.Context, q string) (admin.QueueStats, error) {
	n := int64(len(q)) * 7919
	return admin.QueueStats{Scheduled: n, Ready: n * 3, Active: 64, Dead: n % 1000, Paused: q == "queue-007"}, nil
}

func (f fakeBackend) Fleet(context.Context, string) (admin.Fleet, error) {
	fl := admin.Fleet{Leader: "worker-host-17-48213-a4ee82a7", LeaderTTL: 20 * time.Second}
	for i := range 3 {
		fl.Processes = append(fl.Processes, admin.FleetProcess{
			ID: fmt.Sprintf("worker-host-%d-48213-a4ee82a7", 17+i), Concurrency: 32, Leader: i == 0,
			ReportedAt: time.Now(), Version: "1.4.2", StartedAt: time.Now().Add(-time.Hour),
		})
	}
	return fl, nil
}

func (f fakeBackend) Jobs(context.Context, admin.JobListParams) (admin.JobPage, error) {
	return admin.JobPage{}, nil
}

func (f fakeBackend) Get(_ context.Context, q, id string) (*worker.Job, error) {
	return nil, fmt.Errorf("queue %q job %q: %w", q, id, worker.ErrNotFound)
}

// History is busy and uneven: every minute has successes, retries,
// deaths and lags, different from the minute before.
func (f fakeBackend) History(_ context.Context, q string, from, to time.Time) ([]admin.HistoryMinute, error) {
	var out []admin.HistoryMinute
	seed := int64(len(q) + int(q[len(q)-1]))
	for t := from.Truncate(time.Minute); t.Before(to); t = t.Add(time.Minute) {
		i := int64(len(out))
		m := admin.HistoryMinute{Start: t, Succeeded: 1000 + (i*i*37+seed*101)%9000, Retried: 1 + (i*13+seed)%50, Died: 1 + (i*7+seed)%9}
		for bkt := range m.Lag {
			m.Lag[bkt] = (i*int64(bkt+3) + seed) % 200
		}
		out = append(out, m)
	}
	return out, nil
}

func (f fakeBackend) Periodic(context.Context, string) ([]admin.PeriodicStatus, error) {
	return nil, nil
}

// fakeUI serves the UI of backend with the test tokens; the API has no
// backend (the pages read through the UI's).
func fakeUI(t testing.TB, backend ui.Backend) *ui.Handler {
	t.Helper()
	a, err := api.New(api.Options{
		Backend: func() admin.Operator { return nil },
		Tokens:  []api.Token{{Name: "ops", Secret: adminSecret, Role: api.RoleAdmin}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ui.New(ui.Options{Backend: func() ui.Backend { return backend }, API: a, Revocations: noRevocations{}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// noRevocations has no log-out: the overview's tests measure pages, not
// sessions (revoke_test.go has those, on Redis).
type noRevocations struct{}

func (noRevocations) Revoke(context.Context, string, time.Duration) error { return nil }
func (noRevocations) Revoked(context.Context, string) (bool, error)       { return false, nil }

// loginCookie logs in to h and returns the session cookie.
func loginCookie(t testing.TB, h http.Handler) *http.Cookie {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader(url.Values{"token": {adminSecret}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.Name == "courier_session" {
			return c
		}
	}
	t.Fatalf("login: %d %s", rec.Code, rec.Body)
	return nil
}

// getOverview renders the overview with the session cookie.
func getOverview(t testing.TB, h http.Handler, c *http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/ui/", nil)
	req.AddCookie(c)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("overview: %d %s", rec.Code, rec.Body)
	}
	return rec
}

// TestOverviewSize: the overview of 100 queues, each with a full and busy
// hour of history, stays within 100 KB.
func TestOverviewSize(t *testing.T) {
	t.Parallel()
	h := fakeUI(t, fakeBackend{n: 100})
	body := getOverview(t, h, loginCookie(t, h)).Body.String()
	if n := strings.Count(body, `<tr data-queue=`); n != 100 {
		t.Fatalf("%d queues on the page", n)
	}
	if !strings.Contains(body, `<svg class="spark"`) || !strings.Contains(body, `id="overview-chart"`) {
		t.Fatal("no charts")
	}
	t.Logf("overview of 100 queues: %d bytes", len(body))
	if len(body) > 100_000 {
		t.Fatalf("the overview of 100 queues is %d bytes; the budget is 100 KB", len(body))
	}
}

// TestOverviewPages: queues beyond 100 are on further pages, reached by
// cursor.
func TestOverviewPages(t *testing.T) {
	t.Parallel()
	h := fakeUI(t, fakeBackend{n: 230})
	c := loginCookie(t, h)
	req := httptest.NewRequest(http.MethodGet, "/ui/?cursor=200", nil)
	req.AddCookie(c)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body := rec.Body.String()
	if n := strings.Count(body, `<tr data-queue=`); n != 30 || !strings.Contains(body, "230 queues in all, 30 on this page") ||
		!strings.Contains(body, `id="first-page"`) || strings.Contains(body, `id="next-page"`) {
		t.Fatalf("the last page: %d queues; body %s", n, body)
	}
}

// BenchmarkOverviewRender is the overview of 100 queues without Redis:
// the UI's own time.
func BenchmarkOverviewRender(b *testing.B) {
	h := fakeUI(b, fakeBackend{n: 100})
	c := loginCookie(b, h)
	b.ResetTimer()
	for b.Loop() {
		getOverview(b, h, c)
	}
}

// BenchmarkOverview is the overview of 100 queues holding 1M jobs and a
// day of busy history each (what the default retention keeps) on real
// Redis: 300 reads (stats, fleet, an hour of history each) and the page.
// cold is the first view of a new handler, which reads the whole hour of
// each queue; warm a view (a live refresh) after one, which reads the
// minutes since.
func BenchmarkOverview(b *testing.B) {
	rdb := testkit.Single(b)
	prefix := testkit.Prefix(b)
	client, err := admin.NewClient(rdb, worker.Config{Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	const queues, perQueue = 100, 10_000
	ctx := b.Context()
	specs := make([]worker.JobSpec, 1000)
	for q := range queues {
		for off := 0; off < perQueue; off += len(specs) {
			for i := range specs {
				specs[i] = worker.JobSpec{Queue: fmt.Sprintf("queue-%03d", q), Payload: []byte(`{"n":1}`)}
				if i%2 == 0 {
					specs[i].Delay = time.Hour
				}
			}
			if _, err := client.Enqueue(ctx, specs); err != nil {
				b.Fatal(err)
			}
		}
		fillHistory(b, rdb, prefix, fmt.Sprintf("queue-%03d", q))
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			h := fakeUI(b, client)
			c := loginCookie(b, h)
			b.StartTimer()
			getOverview(b, h, c)
		}
	})
	b.Run("warm", func(b *testing.B) {
		h := fakeUI(b, client)
		c := loginCookie(b, h)
		getOverview(b, h, c)
		for b.Loop() {
			getOverview(b, h, c)
		}
	})
}

// fillHistory writes a day of busy minutes into queue's history hash (the
// layout of worker/internal/store/history.go: field "<minute>:<kind>"), as
// the scripts would have.
func fillHistory(b *testing.B, rdb rueidis.Client, prefix, queue string) {
	b.Helper()
	now := time.Now().Unix() / 60
	cmd := rdb.B().Hset().Key(prefix + ":{" + queue + "}:history").FieldValue()
	for m := now - 24*60; m <= now; m++ {
		for _, kind := range []string{"s", "r", "d", "l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11"} {
			cmd = cmd.FieldValue(fmt.Sprintf("%d:%s", m, kind), strconv.FormatInt(m%97+1, 10))
		}
	}
	if err := rdb.Do(b.Context(), cmd.Build()).Error(); err != nil {
		b.Fatal(err)
	}
}

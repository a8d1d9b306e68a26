package ui_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestJobPageShowsHeaders: a job's headers are a table of names and
// values, sorted by name, escaped; traceparent is one like the others.
func TestJobPageShowsHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.enqueue(
		worker.JobSpec{Queue: "q", ID: "h", Headers: map[string]string{
			"tenant": "acme", "traceparent": traceparent, "note": `<script>alert(1)</script>`,
		}},
		worker.JobSpec{Queue: "q", ID: "none"},
	)
	br := b.login(adminSecret)
	p := br.get("/ui/queues/q/jobs/h").want(t, http.StatusOK, `<table id="headers"`,
		`<tr data-header="tenant"><td class="id">tenant<td class="id">acme`,
		`<tr data-header="traceparent"><td class="id">traceparent<td class="id">`+traceparent,
		`<td class="id">&lt;script&gt;alert(1)&lt;/script&gt;`)
	if strings.Contains(p.body, "<script>alert") {
		t.Fatal("a header value holds a raw <script>")
	}
	if i, j, k := strings.Index(p.body, `data-header="note"`), strings.Index(p.body, `data-header="tenant"`),
		strings.Index(p.body, `data-header="traceparent"`); i >= j || j >= k {
		t.Errorf("the headers are not sorted by name: note at %d, tenant at %d, traceparent at %d", i, j, k)
	}
	br.get("/ui/queues/q/jobs/none").want(t, http.StatusOK, `<p id="headers" class="muted">None.</p>`)
	// A queue without completed jobs has no completed count or tab.
	p = br.get("/ui/queues/q").want(t, http.StatusOK, `id="tab-dead"`)
	if strings.Contains(p.body, `id="tab-completed"`) || strings.Contains(p.body, `data-state="completed"`) {
		t.Error("a queue without completed jobs shows the completed tab or count")
	}
}

// TestProgressOfARunningJob: the progress a running job reported shows on
// its page (bar, percent, message, age) and in the list of active jobs.
func TestProgressOfARunningJob(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	// A short lease: the report is stored with the next renewal, every
	// Lease/3.
	b.serveWith(worker.Config{Lease: 300 * time.Millisecond}, "q", worker.HandlerFunc(func(ctx context.Context, j *worker.Job) error {
		if j.ID == "p" {
			if err := j.ReportProgress(42.5, "step <2> of 4"); err != nil {
				return err
			}
		}
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil
	}), worker.QueueOptions{Concurrency: 2})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "p"}, worker.JobSpec{Queue: "q", ID: "quiet"})
	br := b.login(adminSecret)
	testkit.Eventually(t, 15*time.Second, "the job page to show the progress", func() bool {
		return strings.Contains(br.get("/ui/queues/q/jobs/p").body, `id="job-progress"`)
	})
	p := br.get("/ui/queues/q/jobs/p").want(t, http.StatusOK, `<progress max="100" value="42.5">42.5%</progress>`,
		`<span id="progress-percent">42.5%</span>`, `<span id="progress-message">step &lt;2&gt; of 4</span>`, "updated ")
	if strings.Contains(p.body, `<span id="finished-at">`) || strings.Contains(p.body, `id="result"`) {
		t.Error("an active job's page shows a result")
	}
	p = br.get("/ui/queues/q?state=active").want(t, http.StatusOK, `<th>Progress`, `<span class="pct">42.5%</span>`)
	if row := rowOf(p.body, "quiet"); !strings.Contains(row, `<td class="progress">—`) {
		t.Errorf("the row of a job that reported no progress: %s", row)
	}
	br.get("/ui/queues/q/jobs/quiet").want(t, http.StatusOK, `id="job-state-name">active<`)
}

// TestCompletedJobs: a queue that retains its finished jobs shows their
// count, a completed tab listing them with a preview of each result, and
// each job's page its finish time and result.
func TestCompletedJobs(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	results := map[string][]byte{
		"json": []byte(`{"rows":3,"html":"<i>x</i>"}`),
		"bin":  {0xff, 0x00, 'A'},
		"text": []byte("line one\nline <two>"),
	}
	b.serve("q", worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		if r, ok := results[j.ID]; ok {
			return j.SetResult(r)
		}
		return nil
	}), worker.QueueOptions{RetainCompleted: worker.Retention{Count: 10}})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "json"}, worker.JobSpec{Queue: "q", ID: "bin"},
		worker.JobSpec{Queue: "q", ID: "text"}, worker.JobSpec{Queue: "q", ID: "none"})
	testkit.Eventually(t, 15*time.Second, "four completed jobs", func() bool {
		st, err := b.client.Stats(t.Context(), "q")
		return err == nil && st.Completed == 4
	})
	br := b.login(adminSecret)
	br.get("/ui/queues/q").want(t, http.StatusOK, `<span data-state="completed">4</span>`, `id="tab-completed"`)
	p := br.get("/ui/queues/q?state=completed").want(t, http.StatusOK, `id="tab-completed" aria-current="page"`,
		`<th>Finished<th class="n">Attempts<th>Result`)
	for id, want := range map[string]string{
		"json": `<td class="id result">{&#34;rows&#34;:3,&#34;html&#34;:&#34;&lt;i&gt;x&lt;/i&gt;&#34;}`,
		"bin":  `<td class="id result">binary, 3 bytes: ff0041`,
		"text": `<td class="id result">line one line &lt;two&gt;`,
		"none": `<td class="id result">—`,
	} {
		if row := rowOf(p.body, id); !strings.Contains(row, want) || !strings.Contains(row, " ago</span>") {
			t.Errorf("the row of job %s lacks %q or its finish time: %s", id, want, row)
		}
	}
	p = br.get("/ui/queues/q/jobs/json").want(t, http.StatusOK, `id="job-state-name">completed<`,
		`Result <span class="muted">JSON, 28 bytes</span>`, "{\n  &#34;rows&#34;: 3,\n  &#34;html&#34;: &#34;&lt;i&gt;x&lt;/i&gt;&#34;\n}",
		"completed at attempt 1", `<dd id="finished-at">20`)
	if strings.Contains(p.body, `id="cancel"`) || strings.Contains(p.body, "<i>x") {
		t.Error("a completed job's page offers to cancel it or holds the result's markup raw")
	}
	br.get("/ui/queues/q/jobs/bin").want(t, http.StatusOK, "binary, 3 bytes", "00000000  ff 00 41")
	br.get("/ui/queues/q/jobs/none").want(t, http.StatusOK, "empty, 0 bytes", "The handler set no result.")
}

// rowOf returns the table row of job id in body ("" when none).
func rowOf(body, id string) string {
	_, row, ok := strings.Cut(body, `<tr data-job-id="`+id+`">`)
	if !ok {
		return ""
	}
	row, _, _ = strings.Cut(row, "\n")
	return row
}

package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func TestMarkupIsEscaped(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	const evil = `<script>alert(1)</script>`
	b.enqueue(worker.JobSpec{Queue: "q", ID: "text", Payload: []byte("hi " + evil)})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "json", Payload: []byte(`{"html":"` + evil + `"}`)})
	b.kill("q", map[string]string{"x": "failed: " + evil}, "x")
	br := b.login(adminSecret)
	for _, path := range []string{"/ui/queues/q/jobs/text", "/ui/queues/q/jobs/json", "/ui/queues/q/jobs/x", "/ui/queues/q?state=dead"} {
		p := br.get(path).want(t, http.StatusOK, "&lt;script&gt;alert(1)&lt;/script&gt;")
		if strings.Contains(p.body, "<script>") {
			t.Fatalf("%s holds a raw <script>:\n%s", path, p.body)
		}
	}
	br.get("/ui/queues/q/jobs/json").want(t, http.StatusOK, "JSON, ", "{\n  &#34;html&#34;")
}

func TestPayloadKinds(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	big := strings.Repeat("a", 70<<10)
	b.enqueue(
		worker.JobSpec{Queue: "q", ID: "bin", Payload: []byte{0xff, 0x00, 'A', 0x80}},
		worker.JobSpec{Queue: "q", ID: "big", Payload: []byte(big)},
		worker.JobSpec{Queue: "q", ID: "none"},
	)
	br := b.login(adminSecret)
	br.get("/ui/queues/q/jobs/bin").want(t, http.StatusOK, "binary, 4 bytes", "00000000  ff 00 41 80")
	p := br.get("/ui/queues/q/jobs/big").want(t, http.StatusOK, "text, 71,680 bytes", "only its beginning is shown")
	if strings.Count(p.body, "a") > 66<<10 {
		t.Fatal("more than 64 KiB of the payload shown")
	}
	br.get("/ui/queues/q/jobs/none").want(t, http.StatusOK, "empty, 0 bytes")
}

var rowRE = regexp.MustCompile(`data-job-id="([^"]+)"`)
var nextRE = regexp.MustCompile(`<a href="([^"]+)" id="next-page">`)

func TestQueuePagesVisitEveryJobOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	var specs []worker.JobSpec
	for i := range 120 {
		specs = append(specs, worker.JobSpec{Queue: "q", ID: fmt.Sprintf("job-%03d", i), Delay: time.Duration(i+1) * time.Minute})
	}
	b.enqueue(specs...)
	br := b.login(adminSecret)
	seen := map[string]int{}
	path, pages := "/ui/queues/q?state=scheduled", 0
	for path != "" {
		p := br.get(path).want(t, http.StatusOK)
		pages++
		if pages > 1 && !strings.Contains(p.body, `id="first-page"`) {
			t.Fatal("no First page link after the first page")
		}
		rows := rowRE.FindAllStringSubmatch(p.body, -1)
		if len(rows) > 50 {
			t.Fatalf("%d rows on a page", len(rows))
		}
		for _, m := range rows {
			seen[m[1]]++
		}
		path = ""
		if m := nextRE.FindStringSubmatch(p.body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if len(seen) != 120 || pages != 3 {
		t.Fatalf("%d jobs on %d pages, want 120 on 3", len(seen), pages)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("job %s listed %d times", id, n)
		}
	}
	br.get("/ui/queues/q?state=scheduled&cursor=garbage").want(t, http.StatusBadRequest, "cursor")
	br.get("/ui/queues/q?state=done").want(t, http.StatusBadRequest, "no state")
}

func TestNotFoundAndForbidden(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a"}, worker.JobSpec{Queue: "billing", ID: "b"})
	br := b.login(adminSecret)
	br.get("/ui/queues/nope").want(t, http.StatusNotFound, `There is no queue &#34;nope&#34;`)
	br.get("/ui/queues/q/jobs/nope").want(t, http.StatusNotFound, "job not found")
	br.get("/ui/queues/bad%20name").want(t, http.StatusBadRequest, "invalid Queue")
	br.get("/ui/nothing/here").want(t, http.StatusNotFound)

	limited := b.login(limitedSecret)
	p := limited.get("/ui/").want(t, http.StatusOK, `data-queue="billing"`)
	if strings.Contains(p.body, `data-queue="q"`) {
		t.Fatal("a token limited to billing sees queue q in the overview")
	}
	limited.get("/ui/queues/q").want(t, http.StatusForbidden, "may not use queue")
	limited.get("/ui/queues/q/jobs/a").want(t, http.StatusForbidden, "may not use queue")
	limited.get("/ui/queues/billing").want(t, http.StatusOK)
}

// TestPagesOnCluster runs the overview, a queue's page and the pages
// across queues on Redis Cluster.
func TestPagesOnCluster(t *testing.T) {
	t.Parallel()
	b := setup(t, config{rdb: testkit.Cluster(t)})
	for _, q := range []string{"a", "b", "c"} {
		b.enqueue(worker.JobSpec{Queue: q, ID: q + "-1"}, worker.JobSpec{Queue: q, ID: q + "-2", Delay: time.Hour})
	}
	b.kill("c", nil, "c-dead")
	br := b.login(adminSecret)
	p := br.get("/ui/").want(t, http.StatusOK, `id="overview-chart"`, `id="counts"`)
	for _, q := range []string{"a", "b", "c"} {
		if !strings.Contains(p.body, `data-queue="`+q+`"`) {
			t.Fatalf("queue %s missing from the overview", q)
		}
	}
	br.get("/ui/queues/a").want(t, http.StatusOK, `data-job-id="a-1"`, `id="queue-counts"`, `id="queue-chart"`)
	br.get("/ui/queues/a?state=scheduled").want(t, http.StatusOK, `data-job-id="a-2"`)
	br.get("/ui/queues/c?state=dead").want(t, http.StatusOK, `data-job-id="c-dead"`)
	br.get("/ui/fleet").want(t, http.StatusOK, `id="fleet"`)
	br.get("/ui/locks").want(t, http.StatusOK, `id="locks"`)
	br.get("/ui/periodic").want(t, http.StatusOK, `id="periodic"`)
}

func TestOverviewShowsHistoryAndFleet(t *testing.T) {
	t.Parallel()
	b := setup(t, config{})
	done := make(chan struct{}, 10)
	b.serve("q", worker.HandlerFunc(func(_ context.Context, _ *worker.Job) error {
		done <- struct{}{}
		return nil
	}))
	for i := range 3 {
		b.enqueue(worker.JobSpec{Queue: "q", ID: fmt.Sprint("j", i)})
	}
	for range 3 {
		<-done
	}
	br := b.login(adminSecret)
	testkit.Eventually(t, 15*time.Second, "the overview to show the processed jobs and a leader", func() bool {
		p := br.get("/ui/")
		return strings.Contains(p.body, "processed 3") && !strings.Contains(p.body, `<td class="id">—`)
	})
	br.get("/ui/fleet").want(t, http.StatusOK, "q</a> ")
	br.get("/ui/locks").want(t, http.StatusOK, `data-queue="q"`)
}

// TestPartitionedQueuePages: a queue split into partitions shows as one
// queue, with its partitions and who leads them.
func TestPartitionedQueuePages(t *testing.T) {
	t.Parallel()
	b := setup(t, config{rdb: testkit.Cluster(t)})
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	b.serve("pq", worker.HandlerFunc(func(ctx context.Context, _ *worker.Job) error {
		select { // keep the jobs active, in every partition
		case <-block:
		case <-ctx.Done():
		}
		return nil
	}), worker.QueueOptions{Partitions: 3, Concurrency: 30})
	c, err := admin.NewClient(b.rdb, worker.Config{Prefix: b.prefix})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "the queue to have 3 partitions", func() bool {
		n, err := c.Partitions(t.Context(), "pq")
		return err == nil && n == 3
	})
	b.enqueue(worker.JobSpec{Queue: "pq", ID: "p-1"}, worker.JobSpec{Queue: "pq", ID: "p-2"}, worker.JobSpec{Queue: "pq", ID: "p-3"},
		worker.JobSpec{Queue: "pq", ID: "p-4"}, worker.JobSpec{Queue: "pq", ID: "p-5"}, worker.JobSpec{Queue: "pq", ID: "p-6"})
	br := b.login(adminSecret)
	testkit.Eventually(t, 15*time.Second, "the queue page to show three partitions led and six active jobs", func() bool {
		p := br.get("/ui/queues/pq?state=active")
		if p.status != http.StatusOK {
			t.Fatalf("the queue page answered %d: %s", p.status, p.body)
		}
		return strings.Contains(p.body, `id="partitions"`) && strings.Contains(p.body, "leads 3") &&
			strings.Count(p.body, `data-job-id="p-`) == 6
	})
	br.get("/ui/fleet").want(t, http.StatusOK, "(3 of 3 partitions)")
	br.get("/ui/queues/pq/jobs/p-5").want(t, http.StatusOK, `state-active`)
}

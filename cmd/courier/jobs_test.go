package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// jobsPages follows courier jobs list --json from page to page and returns
// the ids in order.
func jobsPages(t *testing.T, b *cliBundle, flags ...string) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for page := 0; page < 100; page++ {
		args := append([]string{"--queue", "q", "--json", "--limit", "2", "--cursor", cursor}, flags...)
		code, stdout, stderr := b.run(t, "", "jobs list", args...)
		if code != 0 {
			t.Fatalf("jobs list %v: exit %d, stderr %q", flags, code, stderr)
		}
		p := decodeJSON[wire.Page](t, stdout)
		for _, j := range p.Jobs {
			ids = append(ids, j.ID)
		}
		if p.NextCursor == nil {
			return ids
		}
		cursor = *p.NextCursor
	}
	t.Fatal("more than 100 pages")
	return nil
}

// TestJobsList: courier jobs list pages every state; a running job shows
// the process that runs it and when it started.
func TestJobsList(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.killJobs(t, "q", "d-1", "d-2", "d-3")
	b.enqueue(t,
		worker.JobSpec{Queue: "q", ID: "r-1"}, worker.JobSpec{Queue: "q", ID: "r-2", Priority: worker.PriorityHigh},
		worker.JobSpec{Queue: "q", ID: "r-3"},
		worker.JobSpec{Queue: "q", ID: "s-1", Delay: time.Hour}, worker.JobSpec{Queue: "q", ID: "s-2", Delay: 2 * time.Hour},
	)
	for _, c := range []struct {
		state string
		want  []string
	}{
		{"ready", []string{"r-2", "r-1", "r-3"}}, // the high level first, then by run-at
		{"scheduled", []string{"s-1", "s-2"}},
		{"dead", []string{"d-1", "d-2", "d-3"}},
		{"active", nil},
	} {
		got := jobsPages(t, b, "--state", c.state)
		if c.state == "dead" {
			slices.Sort(got)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("--state %s: %v; want %v", c.state, got, c.want)
		}
	}
	code, stdout, stderr := b.run(t, "", "jobs list", "--queue", "q", "--state", "scheduled")
	rows := tableRows(stdout)
	if code != 0 || len(rows) != 3 || !slices.Equal(rows[0], []string{"ID", "PRIORITY", "RUN", "AT", "ATTEMPTS", "LAST", "ERROR"}) || rows[1][0] != "s-1" {
		t.Errorf("scheduled table: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	if code, stdout, _ := b.run(t, "", "jobs list", "--queue", "q", "--state", "dead", "--error", "BOOM D-2"); code != 0 || !strings.Contains(stdout, "d-2") || strings.Contains(stdout, "d-1") {
		t.Errorf("dead filtered by error text: exit %d:\n%s", code, stdout)
	}
	if got := jobsPages(t, b, "--state", "dead", "--older-than", "1h"); len(got) != 0 {
		t.Errorf("dead older than 1h: %v; want none", got)
	}

	// A job held by a handler is active, with its worker and start time.
	release := make(chan struct{})
	reg := worker.NewRegistry()
	hold := func(ctx context.Context, _ *worker.Job) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	if err := reg.Register("q", worker.HandlerFunc(hold), worker.QueueOptions{Concurrency: 10}); err != nil {
		t.Fatal(err)
	}
	d, err := worker.NewDaemon(testkit.Single(t), reg, worker.Config{Prefix: b.prefix, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan error, 1)
	go func() { stopped <- d.Run(ctx) }()
	defer func() {
		close(release)
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}()
	testkit.Eventually(t, 10*time.Second, "3 active jobs", func() bool { return b.stats(t, "q").Active == 3 })
	code, stdout, stderr = b.run(t, "", "jobs list", "--queue", "q", "--state", "active", "--json")
	p := decodeJSON[wire.Page](t, stdout)
	if code != 0 || len(p.Jobs) != 3 {
		t.Fatalf("active: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	for _, j := range p.Jobs {
		if j.State != "active" || j.Worker != d.ID() || j.StartedAt == nil || j.LeaseUntil == nil || time.Since(*j.StartedAt) > time.Minute {
			t.Errorf("active job %s: state %s, worker %q, started %v, lease %v; want active on %s, just started", j.ID, j.State, j.Worker, j.StartedAt, j.LeaseUntil, d.ID())
		}
	}
	if _, stdout, _ := b.run(t, "", "jobs list", "--queue", "q", "--state", "active"); !strings.Contains(stdout, d.ID()) {
		t.Errorf("the active table does not name the worker %s:\n%s", d.ID(), stdout)
	}
}

// TestJobsListUsage: bad states, filters on other states and bad cursors
// are usage errors that name the flag.
func TestJobsListUsage(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	for _, c := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"no state", []string{"--queue", "q"}, "--queue and --state are required"},
		{"bad state", []string{"--queue", "q", "--state", "running"}, "--state must be scheduled, ready, active, dead"},
		{"filter on ready", []string{"--queue", "q", "--state", "ready", "--error", "x"}, "need --state dead"},
		{"bad cursor", []string{"--queue", "q", "--state", "ready", "--cursor", "nope"}, "invalid --cursor"},
		{"bad limit", []string{"--queue", "q", "--state", "ready", "--limit", "5000"}, "--limit"},
	} {
		code, stdout, stderr := b.run(t, "", "jobs list", c.flags...)
		checkOutput(t, code, stdout, stderr, exitUsage, c.want)
	}
}

// TestDeadTriage: requeue and purge by several ids, by filter, with a dry
// run that changes nothing, through Redis and through the API alike.
func TestDeadTriage(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.killWithErrors(t, "q",
		doomedJob{id: "t-1", err: "timeout talking to smtp"}, doomedJob{id: "t-2", err: "TIMEOUT again"},
		doomedJob{id: "b-1", err: "bad address"}, doomedJob{id: "b-2", err: "bad address"})

	code, stdout, stderr := b.run(t, "", "dead purge", "--queue", "q", "--error", "timeout", "--dry-run")
	if code != 0 || !strings.HasPrefix(stdout, "would purge 2 dead job(s) of queue q\nfirst: ") {
		t.Errorf("dry run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if s := b.stats(t, "q"); s.Dead != 4 {
		t.Fatalf("after the dry run: %+v; want the 4 dead jobs kept", s)
	}
	code, stdout, stderr = b.run(t, "", "dead requeue", "--queue", "q", "--error", "timeout", "--json")
	tr := decodeJSON[wire.Triage](t, stdout)
	if code != 0 || tr.Action != "requeue" || tr.Matched != 2 || tr.Changed != 2 || tr.DryRun || tr.NextCursor != nil {
		t.Errorf("requeue by filter: exit %d, stderr %q: %+v", code, stderr, tr)
	}
	code, stdout, stderr = b.run(t, "b-2\n\nnope\n", "dead purge", "--queue", "q", "--job", "b-1", "--ids-file", "-")
	if code != 0 || stdout != "purged 2 dead job(s) of queue q (1 of the ids given were not dead)\n" {
		t.Errorf("purge by ids: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if s := b.stats(t, "q"); s != (admin.QueueStats{Ready: 2}) {
		t.Errorf("queue q at the end: %+v; want the two requeued jobs ready and nothing dead", s)
	}
	code, stdout, stderr = b.run(t, "", "dead purge", "--queue", "q", "--job", "b-1", "--job", "b-2")
	checkOutput(t, code, stdout, stderr, exitNotFound, "none of these 2 jobs")
}

// TestQueueWaitAndForget: courier queue wait returns once the queue is
// empty (or at --timeout, exit 1, saying what is left), and forget removes
// a queue that holds nothing and refuses one that holds a job (exit 4).
func TestQueueWaitAndForget(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.enqueue(t, worker.JobSpec{Queue: "busy", ID: "later", Delay: time.Hour})
	code, stdout, stderr := b.run(t, "", "queue wait", "--queue", "busy", "--timeout", "200ms")
	checkOutput(t, code, stdout, stderr, exitFailure, "1 scheduled")
	if !strings.Contains(stderr, "--timeout 200ms reached") {
		t.Errorf("the timeout is not named: %q", stderr)
	}
	code, stdout, stderr = b.run(t, "", "queue forget", "--queue", "busy")
	checkOutput(t, code, stdout, stderr, exitConflict, "1 scheduled job")

	if err := b.client.Cancel(t.Context(), "busy", "later"); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = b.run(t, "", "queue wait", "--queue", "busy", "--json")
	if code != 0 || !strings.Contains(stdout, `"empty": true`) {
		t.Errorf("wait on an empty queue: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// The cancelled job is kept, and keeps the queue in use, until purged.
	code, stdout, stderr = b.run(t, "", "queue forget", "--queue", "busy")
	checkOutput(t, code, stdout, stderr, exitConflict, "1 cancelled job")
	code, stdout, stderr = b.run(t, "", "dead purge", "--queue", "busy", "--state", "cancelled", "--all", "--yes")
	if code != 0 {
		t.Fatalf("purge of the cancelled job: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = b.run(t, "", "queue forget", "--queue", "busy")
	if code != 0 || stdout != "forgot queue busy\n" {
		t.Errorf("forget: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	queues, err := allQueues(t.Context(), b.client)
	if err != nil || slices.Contains(queues, "busy") {
		t.Errorf("queues after forget: %v (%v); want busy gone", queues, err)
	}
	code, stdout, stderr = b.run(t, "", "queue wait", "--queue", "busy", "--api", "http://127.0.0.1:1")
	checkOutput(t, code, stdout, stderr, exitUsage, "flag provided but not defined: --api")
}

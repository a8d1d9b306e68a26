package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestEnqueueKind: --kind gives the job its kind, directly on Redis and
// through the API; inspect shows it (and never the header it travels
// in), jobs list shows a KIND column when a job of the page has a kind,
// and none on a page without.
func TestEnqueueKind(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	nop := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	serveInProcess(t, worker.Config{Prefix: b.prefix, PollInterval: 20 * time.Millisecond}, "kq",
		worker.Kinds{"email.send": nop, "report:build": nop, "": nop}, worker.QueueOptions{})
	waitFleet(t, b, "kq")

	code, stdout, stderr := b.run(t, "", "enqueue", "--queue", "kq", "--id", "direct", "--kind", "email.send", "--delay", "1h", "--payload", "x")
	if code != 0 || stdout != "direct\n" {
		t.Fatalf("enqueue: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = runCLIStdin(t, t.Context(), "", "enqueue", "--api", url, "--token", testAdminToken,
		"--queue", "kq", "--id", "via-api", "--kind", "report:build", "--delay", "1h", "--payload", "x")
	checkOutput(t, code, stdout, stderr, 0, "via-api")
	b.enqueue(t, worker.JobSpec{Queue: "kq", ID: "plain", Delay: time.Hour})
	for id, want := range map[string]string{"direct": "email.send", "via-api": "report:build", "plain": ""} {
		if got := b.get(t, "kq", id).Kind; got != want {
			t.Errorf("%s: kind %q, want %q", id, got, want)
		}
	}

	code, stdout, stderr = b.run(t, "", "inspect", "--queue", "kq", "--job", "direct")
	if code != 0 || !regexp.MustCompile(`(?m)^kind:\s+email\.send$`).MatchString(stdout) || strings.Contains(stdout, "courier.kind") {
		t.Errorf("inspect: exit %d, stderr %q; want a kind line and no courier.kind in:\n%s", code, stderr, stdout)
	}
	if _, stdout, _ = b.run(t, "", "inspect", "--queue", "kq", "--job", "plain"); strings.Contains(stdout, "kind:") {
		t.Errorf("inspect of a job without a kind shows one:\n%s", stdout)
	}
	code, stdout, _ = b.run(t, "", "inspect", "--queue", "kq", "--job", "via-api", "--json")
	if j := decodeJSON[wire.Job](t, stdout); code != 0 || j.Kind != "report:build" || j.Headers != nil {
		t.Errorf("inspect --json: exit %d, kind %q, headers %q", code, j.Kind, j.Headers)
	}

	code, stdout, stderr = b.run(t, "", "jobs list", "--queue", "kq", "--state", "scheduled")
	rows := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(rows) != 4 || !strings.HasPrefix(rows[0], "ID") || strings.Fields(rows[0])[1] != "KIND" {
		t.Fatalf("jobs list: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	for _, want := range [][2]string{{"direct", "email.send"}, {"via-api", "report:build"}, {"plain", "-"}} {
		if !hasRow(rows[1:], want[0], want[1]) {
			t.Errorf("jobs list: no row %q with kind %q:\n%s", want[0], want[1], stdout)
		}
	}
	b.enqueue(t, worker.JobSpec{Queue: "plainq", ID: "p", Delay: time.Hour})
	if _, stdout, _ = b.run(t, "", "jobs list", "--queue", "plainq", "--state", "scheduled"); strings.Contains(stdout, "KIND") {
		t.Errorf("a page without kinds has a KIND column:\n%s", stdout)
	}

	// The daemon's kinds, in queue status and its JSON.
	code, stdout, stderr = b.run(t, "", "queue status", "--queue", "kq")
	if code != 0 || !regexp.MustCompile(`(?m)KINDS\n.* \(no kind\),email\.send,report:build$`).MatchString(stdout) {
		t.Errorf("queue status: exit %d, stderr %q; want the kinds served in:\n%s", code, stderr, stdout)
	}
	code, stdout, _ = b.run(t, "", "queue status", "--queue", "kq", "--json")
	if v := decodeJSON[wire.Queue](t, stdout); code != 0 || len(v.Workers) != 1 || strings.Join(v.Workers[0].Kinds, ",") != ",email.send,report:build" {
		t.Errorf("queue status --json: exit %d: %s", code, stdout)
	}
}

// hasRow reports whether a row of a table starts with the
// cells id and kind.
func hasRow(rows []string, id, kind string) bool {
	for _, r := range rows {
		if f := strings.Fields(r); len(f) > 1 && f[0] == id && f[1] == kind {
			return true
		}
	}
	return false
}

// TestEnqueueWarnsUnserved: courier enqueue to a queue, or of a kind,
// no daemon has ever served prints the library's warning on stderr (and
// in --json), on Redis and through the API, and still succeeds; to a
// served queue or kind it does not warn.
func TestEnqueueWarnsUnserved(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	nop := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	b.serveWith(t, "reports", nop, worker.QueueOptions{}, worker.Config{})
	serveInProcess(t, worker.Config{Prefix: b.prefix, PollInterval: 20 * time.Millisecond}, "mailq", worker.Kinds{"email.send": nop}, worker.QueueOptions{})
	waitFleet(t, b, "reports")
	waitFleet(t, b, "mailq")

	const warning = `courier enqueue: warning: no daemon has ever served queue "reprots"`
	viaAPI := []string{"--api", url, "--token", testAdminToken}
	for path, extra := range map[string][]string{"Redis": nil, "API": viaAPI} {
		run := func(flags ...string) (int, string, string) {
			if extra == nil {
				return b.run(t, "", "enqueue", flags...)
			}
			return runCLIStdin(t, t.Context(), "", append(append([]string{"enqueue"}, extra...), flags...)...)
		}
		code, stdout, stderr := run("--queue", "reprots", "--delay", "1h", "--payload", "x")
		if code != exitOK || strings.TrimSpace(stdout) == "" || !strings.Contains(stderr, warning+"\n") {
			t.Errorf("%s: a never-served queue: exit %d, stdout %q, stderr %q; want an id and %q", path, code, stdout, stderr, warning)
		}
		code, stdout, stderr = run("--queue", "reprots", "--delay", "1h", "--payload", "x", "--json")
		if v := decodeJSON[struct{ ID, Warning string }](t, stdout); code != exitOK || v.ID == "" || !strings.Contains(v.Warning, `"reprots"`) {
			t.Errorf("%s: --json to a never-served queue: exit %d, stdout %q, stderr %q", path, code, stdout, stderr)
		}
		code, stdout, stderr = run("--queue", "reports", "--delay", "1h", "--payload", "x")
		if code != exitOK || strings.Contains(stderr, "ever served") {
			t.Errorf("%s: a served queue: exit %d, stdout %q, stderr %q; want no warning", path, code, stdout, stderr)
		}
		const kindWarning = `courier enqueue: warning: no daemon has ever served kind "emial.send" of queue "mailq" (kinds served: email.send)`
		code, stdout, stderr = run("--queue", "mailq", "--kind", "emial.send", "--delay", "1h", "--payload", "x")
		if code != exitOK || strings.TrimSpace(stdout) == "" || !strings.Contains(stderr, kindWarning+"\n") {
			t.Errorf("%s: a kind never served: exit %d, stdout %q, stderr %q; want an id and %q", path, code, stdout, stderr, kindWarning)
		}
		code, stdout, stderr = run("--queue", "mailq", "--kind", "email.send", "--delay", "1h", "--payload", "x")
		if code != exitOK || strings.Contains(stderr, "ever served") {
			t.Errorf("%s: a served kind: exit %d, stdout %q, stderr %q; want no warning", path, code, stdout, stderr)
		}
	}
	if s := b.stats(t, "reprots"); s.Scheduled != 4 {
		t.Errorf("queue reprots holds %+v; the warned jobs are stored all the same", s)
	}
}

// waitFleet waits until a daemon reports serving queue.
func waitFleet(t *testing.T, b *cliBundle, queue string) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "a daemon to report serving queue "+queue, func() bool {
		f, err := b.client.Fleet(t.Context(), queue)
		return err == nil && len(f.Processes) > 0
	})
}

// TestPrintWorkersKinds: queue status lists the kinds each process
// serves in a KINDS column, when one serves several kinds, and has no
// such column otherwise.
func TestPrintWorkersKinds(t *testing.T) {
	t.Parallel()
	seen := time.Now()
	v := wire.Queue{Partitions: 1, Workers: []wire.Process{
		{ID: "a", Concurrency: 2, SeenAt: seen, Kinds: []string{"", "email.send"}},
		{ID: "b", Concurrency: 1, SeenAt: seen},
	}}
	var out strings.Builder
	if err := printWorkers(&out, v); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(rows) != 3 || !strings.HasSuffix(rows[0], "KINDS") || !strings.HasSuffix(rows[1], " (no kind),email.send") || !strings.HasSuffix(rows[2], " any") {
		t.Errorf("workers with kinds:\n%s", out.String())
	}
	v.Workers[0].Kinds = nil
	out.Reset()
	if err := printWorkers(&out, v); err != nil || strings.Contains(out.String(), "KINDS") {
		t.Errorf("workers without kinds (%v):\n%s", err, out.String())
	}
}

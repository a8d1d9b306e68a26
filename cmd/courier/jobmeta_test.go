package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// The tests in this file cover what a job carries beside its payload:
// headers (courier enqueue --header), an active job's progress and a
// retained job's result, as inspect, jobs list and queue status show them.

// serveWith runs a daemon of queue with handler h under cfg (the bundle's
// prefix) until the test ends.
func (b *cliBundle) serveWith(t *testing.T, queue string, h worker.HandlerFunc, opts worker.QueueOptions, cfg worker.Config) {
	t.Helper()
	cfg.Prefix, cfg.PollInterval = b.prefix, 20*time.Millisecond
	serveInProcess(t, cfg, queue, h, opts)
}

// TestEnqueueHeaders: --header NAME=VALUE, repeated, gives the job its
// headers (a value may hold "="), directly on Redis and through the API;
// inspect shows them escaped; a malformed or refused header is a usage
// error naming --header, and nothing is stored.
func TestEnqueueHeaders(t *testing.T) { //nolint:tparallel // the refusals run one after another, then the queue is checked
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	want := map[string]string{"tenant": "acme", "sig": "k=v==", "empty": ""}
	flags := []string{"--header", "tenant=acme", "--header", "sig=k=v==", "--header", "empty=", "--delay", "1h", "--payload", "x"}
	// A daemon serves q, so that no enqueue warns it is never served.
	b.serveWith(t, "q", func(context.Context, *worker.Job) error { return nil }, worker.QueueOptions{}, worker.Config{})
	waitFleet(t, b, "q")

	// (stderr may warn that the daemons of other tests use other prefixes)
	code, stdout, stderr := b.run(t, "", "enqueue", append([]string{"--queue", "q", "--id", "direct"}, flags...)...)
	if code != 0 || stdout != "direct\n" {
		t.Fatalf("enqueue: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	args := append([]string{"enqueue", "--queue", "q", "--id", "via-api", "--api", url, "--token", testAdminToken}, flags...)
	code, stdout, stderr = runCLIStdin(t, t.Context(), "", args...)
	checkOutput(t, code, stdout, stderr, 0, "via-api")
	for _, id := range []string{"direct", "via-api"} {
		if got := b.get(t, "q", id).Headers; !maps.Equal(got, want) {
			t.Errorf("%s: headers %q, want %q", id, got, want)
		}
	}

	code, stdout, stderr = b.run(t, "", "inspect", "--queue", "q", "--job", "direct")
	for _, line := range []string{"header:       empty=\n", "header:       sig=k=v==\n", "header:       tenant=acme\n"} {
		if code != 0 || !strings.Contains(stdout, line) {
			t.Errorf("inspect: exit %d, stderr %q, want %q in:\n%s", code, stderr, line, stdout)
		}
	}
	code, stdout, _ = b.run(t, "", "inspect", "--queue", "q", "--job", "direct", "--json")
	if j := decodeJSON[wire.Job](t, stdout); code != 0 || !maps.Equal(j.Headers, want) {
		t.Errorf("inspect --json: exit %d, headers %q", code, j.Headers)
	}

	// A header of another producer, with a bidi override: escaped.
	b.enqueue(t, worker.JobSpec{Queue: "q", ID: "hostile", Delay: time.Hour, Headers: map[string]string{"x": "a\u202eb"}})
	code, stdout, stderr = b.run(t, "", "inspect", "--queue", "q", "--job", "hostile")
	assertTerminalSafe(t, stdout+stderr)
	if code != 0 || !strings.Contains(stdout, `x=a\u202eb`+"\n") {
		t.Errorf("inspect of a hostile header: exit %d: %q", code, stdout)
	}

	before := b.stats(t, "q")
	refusals := []struct {
		name  string
		flags []string
		want  string
	}{
		{"no =", []string{"--header", "tenant"}, `invalid value "tenant" for flag --header: want NAME=VALUE`},
		{"no name", []string{"--header", "=x"}, "for flag --header: the header name before = is empty"},
		{"twice", []string{"--header", "a=1", "--header", "a=2"}, `for flag --header: header "a" is given twice`},
		{"capitals", []string{"--header", "Tenant=x"}, `invalid --header "Tenant": name has 'T' at byte 0`},
		{"value too long", []string{"--header", "a=" + strings.Repeat("v", worker.MaxHeaderValueLen+1)}, `invalid --header "a": value is 1025 bytes long`},
		{"too many", manyHeaderFlags(worker.MaxHeaders + 1), "invalid --header: has 33 headers; the limit is 32"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := b.run(t, "", "enqueue", append([]string{"--queue", "q", "--payload", "x"}, c.flags...)...)
			checkOutput(t, code, stdout, stderr, exitUsage, c.want)
			if n := len(lines(stderr)); n != 2 {
				t.Errorf("stderr has %d lines, want the error and the hint: %q", n, stderr)
			}
			args := append([]string{"enqueue", "--queue", "q", "--payload", "x", "--api", url, "--token", testAdminToken, "--json"}, c.flags...)
			code, stdout, _ = runCLIStdin(t, t.Context(), "", args...)
			if e := decodeJSON[wire.ErrorReply](t, stdout).Error; code != exitUsage || e.Field != "--header" || !strings.Contains(e.Message, c.want) {
				t.Errorf("through the API: exit %d, error %+v; want %d, field --header, %q", code, e, exitUsage, c.want)
			}
		})
	}
	if after := b.stats(t, "q"); after != before {
		t.Errorf("refused enqueues changed the queue: %+v, then %+v", before, after)
	}
}

// manyHeaderFlags is n --header flags, h0=v to h<n-1>=v.
func manyHeaderFlags(n int) []string {
	var flags []string
	for i := range n {
		flags = append(flags, "--header", "h"+strings.Repeat("x", i)+"=v")
	}
	return flags
}

// TestInspectProgress: an active job's progress shows in inspect and in
// the table of active jobs, its message escaped.
func TestInspectProgress(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b.serveWith(t, "q", func(ctx context.Context, j *worker.Job) error {
		if err := j.ReportProgress(62.5, "copying \u202efiles"); err != nil {
			return err
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, worker.QueueOptions{}, worker.Config{Lease: 300 * time.Millisecond}) // renewed, with the progress, every 100ms
	b.enqueue(t, worker.JobSpec{Queue: "q", ID: "busy"})
	testkit.Eventually(t, 10*time.Second, "the progress stored", func() bool {
		j, err := b.client.Get(t.Context(), "q", "busy")
		return err == nil && j.Progress != nil
	})

	code, stdout, stderr := b.run(t, "", "inspect", "--queue", "q", "--job", "busy")
	assertTerminalSafe(t, stdout+stderr)
	if code != 0 || !strings.Contains(stdout, `progress:     62.5% "copying \u202efiles" (updated `) {
		t.Errorf("inspect: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = b.run(t, "", "jobs list", "--queue", "q", "--state", "active")
	assertTerminalSafe(t, stdout+stderr)
	rows := tableRows(stdout)
	if code != 0 || len(rows) != 2 || rows[0][len(rows[0])-1] != "PROGRESS" || !strings.Contains(stdout, `62.5% copying \u202efiles`) {
		t.Errorf("jobs list --state active: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
}

// TestCompletedJobs: the jobs a queue retains list with --state completed,
// with their results escaped; inspect shows a result and its finish time;
// the queue's counts include them.
func TestCompletedJobs(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	b.serveWith(t, "q", func(_ context.Context, j *worker.Job) error {
		return j.SetResult([]byte("\x1b[31mred " + j.ID))
	}, worker.QueueOptions{RetainCompleted: worker.Retention{Count: 10}}, worker.Config{})
	b.enqueue(t, worker.JobSpec{Queue: "q", ID: "c-1"}, worker.JobSpec{Queue: "q", ID: "c-2"})
	testkit.Eventually(t, 10*time.Second, "both jobs completed", func() bool { return b.stats(t, "q").Completed == 2 })

	for mode, run := range map[string]func(cmd string, flags ...string) (int, string, string){
		"redis": func(cmd string, flags ...string) (int, string, string) { return b.run(t, "", cmd, flags...) },
		"api": func(cmd string, flags ...string) (int, string, string) {
			args := append(strings.Fields(cmd), "--api", url, "--token", testAdminToken)
			return runCLIStdin(t, t.Context(), "", append(args, flags...)...)
		},
	} {
		code, stdout, stderr := run("jobs list", "--queue", "q", "--state", "completed")
		assertTerminalSafe(t, stdout+stderr)
		rows := tableRows(stdout)
		if code != 0 || len(rows) != 3 || !slices.Equal(rows[0], []string{"ID", "FINISHED", "AT", "ATTEMPTS", "RESULT"}) ||
			!strings.Contains(stdout, `"\x1b[31mred c-1"`) {
			t.Errorf("%s: jobs list --state completed: exit %d, stderr %q:\n%s", mode, code, stderr, stdout)
		}
		code, stdout, stderr = run("inspect", "--queue", "q", "--job", "c-2")
		assertTerminalSafe(t, stdout+stderr)
		if code != 0 || !strings.Contains(stdout, "state:        completed\n") || !strings.Contains(stdout, "finished at:  ") ||
			!strings.Contains(stdout, `result:       12 bytes: "\x1b[31mred c-2"`) {
			t.Errorf("%s: inspect: exit %d, stderr %q:\n%s", mode, code, stderr, stdout)
		}
		code, stdout, _ = run("inspect", "--queue", "q", "--job", "c-2", "--json")
		if j := decodeJSON[wire.Job](t, stdout); code != 0 || j.State != "completed" || j.FinishedAt == nil || j.ResultBase64 == nil {
			t.Errorf("%s: inspect --json: exit %d: %s", mode, code, stdout)
		}
		code, stdout, _ = run("queue status", "--queue", "q")
		if rows := tableRows(stdout); code != 0 || len(rows) < 2 || rows[0][6] != "COMPLETED" || rows[1][6] != "2" {
			t.Errorf("%s: queue status: exit %d:\n%s", mode, code, stdout)
		}
	}
}

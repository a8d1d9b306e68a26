package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// producerAPIServer serves the API on the bundle's prefix, in-process,
// with a producer token only: what a producer may do through --api.
func (b *cliBundle) producerAPIServer(t *testing.T) string {
	t.Helper()
	h, err := api.New(api.Options{
		Backend: func() admin.Operator { return b.client },
		Tokens:  []api.Token{{Name: "shop", Secret: testProducerToken, Role: api.RoleProducer}},
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// blocker is a worker daemon on one queue whose handler holds every job
// until its context ends.
type blocker struct {
	started chan string // the id of each job started
	causes  chan error  // the cause its context ended with
}

// serveBlocking runs a blocker on queue until the test ends.
func (b *cliBundle) serveBlocking(t *testing.T, queue string) *blocker {
	t.Helper()
	bl := &blocker{started: make(chan string, 1), causes: make(chan error, 1)}
	h := func(ctx context.Context, j *worker.Job) error {
		bl.started <- j.ID
		<-ctx.Done()
		bl.causes <- context.Cause(ctx)
		return nil // ignored once the job is cancelled
	}
	serveInProcess(t, worker.Config{Prefix: b.prefix}, queue, worker.HandlerFunc(h), worker.QueueOptions{Concurrency: 1})
	return bl
}

// TestCancelCommand: courier cancel moves a job that has not started, and
// a running one (its handler told to stop), to the cancelled jobs, saying
// so; a second cancel does nothing and succeeds; it refuses a dead job
// (exit 4) and an unknown one (exit 3), changing nothing; directly on Redis and through the API
// with a producer's token, each on a queue of its own.
func TestCancelCommand(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.producerAPIServer(t)
	modes := map[string]func(t *testing.T, flags ...string) (int, string, string){
		"redis": func(t *testing.T, flags ...string) (int, string, string) {
			t.Helper()
			return b.run(t, "", "cancel", flags...)
		},
		"api": func(t *testing.T, flags ...string) (int, string, string) {
			t.Helper()
			args := []string{"cancel", "--api", url, "--token", testProducerToken}
			return runCLIStdin(t, t.Context(), "", append(args, flags...)...)
		},
	}
	for mode, run := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			q := "q-" + mode
			want := func(what string, code int, stdout, inStderr string, flags ...string) {
				t.Helper()
				c, out, errOut := run(t, append([]string{"--queue", q}, flags...)...)
				if c != code || out != stdout || !strings.Contains(errOut, inStderr) || (code == 0 && errOut != "") {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", what, c, out, errOut, code, stdout, inStderr)
				}
			}

			// Not started: cancelled, kept.
			kept := "; it is kept as cancelled (a handler running it was told to stop); run it again with courier dead requeue --state cancelled\n"
			b.enqueue(t, worker.JobSpec{Queue: q, ID: "later", Delay: time.Hour}, worker.JobSpec{Queue: q, ID: "later-json", Delay: time.Hour})
			want("not started", 0, "cancelled job later of queue "+q+kept, "", "--job", "later")
			c, out, errOut := run(t, "--queue", q, "--job", "later-json", "--json")
			if c != 0 || errOut != "" || decodeJSON[cancelJSON](t, out) != (cancelJSON{Queue: q, ID: "later-json", Cancelled: true}) {
				t.Errorf("--json: exit %d, %s %q", c, out, errOut)
			}
			if s := b.stats(t, q); s != (admin.QueueStats{Cancelled: 2}) {
				t.Errorf("after cancelling the jobs that had not started: %+v, want 2 cancelled", s)
			}

			// Running: its handler is told to stop; the job is cancelled.
			bl := b.serveBlocking(t, q)
			b.enqueue(t, worker.JobSpec{Queue: q, ID: "running"})
			<-bl.started
			want("running", 0, "cancelled job running of queue "+q+kept, "", "--job", "running")
			select {
			case cause := <-bl.causes:
				if !errors.Is(cause, worker.ErrCancelled) {
					t.Errorf("the handler's context ended with %v, want ErrCancelled", cause)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the handler's context did not end within 10s of the cancel")
			}
			if j := b.get(t, q, "running"); j.State != worker.StateCancelled || j.LastError != "cancelled" || j.Attempt != 1 {
				t.Errorf("the cancelled job: %+v", j)
			}
			want("cancelled again", 0, "cancelled job running of queue "+q+kept, "", "--job", "running")

			// Dead, unknown: refused, nothing changed.
			dq := q + "-dead"
			b.killJobs(t, dq, "dead")
			want("dead", exitConflict, "", `job "dead" of queue "`+dq+`" is dead, so there is nothing to cancel; it was left as it is`,
				"--queue", dq, "--job", "dead")
			want("dead", exitConflict, "", "courier dead requeue", "--queue", dq, "--job", "dead")
			want("unknown", exitNotFound, "", `job "nope": job not found`, "--job", "nope")
			if s := b.stats(t, q); s != (admin.QueueStats{Cancelled: 3}) {
				t.Errorf("after the refused cancels: %+v, want the 3 cancelled jobs", s)
			}
		})
	}
}

func TestCancelUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		flags    []string
		code     int
		inStderr string
	}{
		{"help", []string{"-h"}, 0, "Usage: courier cancel --queue Q --job ID"},
		{"no queue", []string{"--job", "x"}, 2, "--queue is required"},
		{"no id", []string{"--queue", "q"}, 2, "--job is required"},
		{"bad queue", []string{"--queue", "a{b}", "--job", "x"}, 2, `invalid --queue: name "a{b}" has '{'`},
		{"bad id", []string{"--queue", "q", "--job", "a b"}, 2, "invalid --job"},
		{"bad id through the API", []string{"--queue", "q", "--job", "a b", "--api", "http://127.0.0.1:1"}, 2, "invalid --job"},
		{"id of 257 bytes", []string{"--queue", "q", "--job", strings.Repeat("i", 257)}, 2, "invalid --job"},
		{"enqueue's flag for a new job's id", []string{"--queue", "q", "--id", "x"}, 2, "flag provided but not defined: --id"},
		{"stray argument", []string{"--queue", "q", "--job", "x", "now"}, 2, `unexpected argument "now"`},
		{"--api and --redis", []string{"--queue", "q", "--job", "x", "--api", "http://127.0.0.1:1"}, 2, "give --api or --redis, not both"},
	}
	checkBare(t, []bareCase{{"listed in help", []string{"help"}, 0, "\n  cancel       cancel a job"}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			b.enqueue(t, worker.JobSpec{Queue: "q", ID: "x", Delay: time.Hour})
			code, stdout, stderr := b.run(t, "", "cancel", tt.flags...)
			checkOutput(t, code, stdout, stderr, tt.code, tt.inStderr)
			if s := b.stats(t, "q"); s != (admin.QueueStats{Scheduled: 1}) {
				t.Errorf("queue q afterwards: %+v, want job x alone, untouched", s)
			}
		})
	}
}

// TestCancelledRequeuePurge: courier dead requeue, purge and list with
// --state cancelled work on the cancelled jobs, directly on Redis and
// through the API with an admin's token, and leave the dead ones alone.
func TestCancelledRequeuePurge(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	for mode, extra := range map[string][]string{"redis": {"--redis", b.addr, "--prefix", b.prefix}, "api": {"--api", url, "--token", testAdminToken}} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			q := "qc-" + mode
			run := func(flags ...string) (int, string, string) {
				t.Helper()
				args := append([]string{"dead"}, flags...)
				return runCLIStdin(t, t.Context(), "", append(append(args, "--queue", q), extra...)...)
			}
			b.killJobs(t, q, "dead")
			b.enqueue(t, worker.JobSpec{Queue: q, ID: "c1", Delay: time.Hour}, worker.JobSpec{Queue: q, ID: "c2", Delay: time.Hour})
			for _, id := range []string{"c1", "c2"} {
				if c, out, errOut := b.run(t, "", "cancel", "--queue", q, "--job", id); c != 0 {
					t.Fatalf("cancel %s: exit %d %s %s", id, c, out, errOut)
				}
			}
			if c, out, errOut := run("list", "--state", "cancelled"); c != 0 || !strings.Contains(out, "c1") || !strings.Contains(out, "c2") || strings.Contains(out, "dead ") {
				t.Errorf("list --state cancelled: exit %d, %q %q; want c1 and c2", c, out, errOut)
			}
			if c, out, errOut := run("requeue", "--state", "cancelled", "--job", "c1", "--job", "dead"); c != 0 || out != "requeued 1 cancelled job(s) of queue "+q+" (1 of the ids given were not cancelled)\n" {
				t.Errorf("requeue --state cancelled: exit %d, %q %q", c, out, errOut)
			}
			if c, out, errOut := run("purge", "--state", "cancelled", "--all", "--yes"); c != 0 || out != "purged 1 cancelled job(s) of queue "+q+"\n" {
				t.Errorf("purge --state cancelled --all: exit %d, %q %q", c, out, errOut)
			}
			if s := b.stats(t, q); s != (admin.QueueStats{Ready: 1, Dead: 1}) {
				t.Errorf("after: %+v; want c1 ready again, c2 gone, the dead job left alone", s)
			}
		})
	}
}

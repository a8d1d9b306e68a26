package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// The tests in this file run the client commands (enqueue, inspect, dead)
// in-process against a real Redis, each under a key prefix of its own, and
// check what they did through the Go client.

// cliBundle is what a client command test needs: where Redis is, the test's
// prefix, and a Go client on both to set up and check the store.
type cliBundle struct {
	addr, prefix string
	client       *admin.Client
}

func setupCLI(t *testing.T) *cliBundle {
	t.Helper()
	b := &cliBundle{addr: testkit.SingleAddr(t), prefix: testkit.Prefix(t)}
	b.client = testClient(t, b.prefix)
	return b
}

// run runs the command cmd ("enqueue", "dead list") with the bundle's
// --redis and --prefix, then flags; a flag given again in flags wins.
func (b *cliBundle) run(t *testing.T, stdin, cmd string, flags ...string) (code int, stdout, stderr string) {
	t.Helper()
	args := append(strings.Fields(cmd), "--redis", b.addr, "--prefix", b.prefix)
	return runCLIStdin(t, t.Context(), stdin, append(args, flags...)...)
}

// runCLIStdin is runCLI with stdin.
func runCLIStdin(t *testing.T, ctx context.Context, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut testkit.Buffer
	code = run(ctx, args, streams{in: strings.NewReader(stdin), out: &out, err: &errOut})
	return code, out.String(), errOut.String()
}

// enqueue puts jobs on queue through the Go client.
func (b *cliBundle) enqueue(t *testing.T, specs ...worker.JobSpec) {
	t.Helper()
	res, err := b.client.Enqueue(t.Context(), specs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
}

// killJobs enqueues a job per id on queue and runs a worker daemon whose
// handler fails every job permanently with "boom <id>", until they are all
// dead; then it stops the daemon. The queue must have no other due jobs.
func (b *cliBundle) killJobs(t *testing.T, queue string, ids ...string) {
	t.Helper()
	jobs := make([]doomedJob, len(ids))
	for i, id := range ids {
		jobs[i] = doomedJob{id: id, payload: []byte("payload of " + id), err: "boom " + id}
	}
	b.killWithErrors(t, queue, jobs...)
}

// doomedJob is a job killWithErrors kills: its id, payload, and the error
// its handler fails with.
type doomedJob struct {
	id      string
	payload []byte
	err     string
}

// killWithErrors enqueues jobs on queue, in order, and runs a worker daemon
// whose handler fails each permanently with its error text, until they are
// all dead; then it stops the daemon. The queue must have no other due
// jobs.
func (b *cliBundle) killWithErrors(t *testing.T, queue string, jobs ...doomedJob) {
	t.Helper()
	specs := make([]worker.JobSpec, len(jobs))
	errs := make(map[string]string, len(jobs))
	for i, j := range jobs {
		specs[i] = worker.JobSpec{Queue: queue, ID: j.id, Payload: j.payload}
		errs[j.id] = j.err
	}
	b.enqueue(t, specs...)
	before, err := b.client.Stats(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	fail := func(_ context.Context, j *worker.Job) error { return worker.Permanent(errors.New(errs[j.ID])) }
	if err := reg.Register(queue, worker.HandlerFunc(fail), worker.QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := worker.NewDaemon(testkit.Single(t), reg, worker.Config{Prefix: b.prefix, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	var runErr error
	go func() {
		defer close(stopped)
		runErr = d.Run(ctx)
	}()
	defer func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			t.Error("the worker daemon did not stop within 30s")
			return
		}
		if runErr != nil {
			t.Errorf("worker daemon: %v", runErr)
		}
	}()
	want := before.Dead + int64(len(jobs))
	testkit.Poll{Stop: stopped}.EventuallyState(t, 30*time.Second, func() (bool, string) {
		s, err := b.client.Stats(t.Context(), queue)
		return err == nil && s.Dead == want, fmt.Sprintf("queue %s: %+v (err %v), want %d dead", queue, s, err, want)
	})
}

// stats returns the counts of queue.
func (b *cliBundle) stats(t *testing.T, queue string) admin.QueueStats {
	t.Helper()
	s, err := b.client.Stats(t.Context(), queue)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// get reads a job that must exist.
func (b *cliBundle) get(t *testing.T, queue, id string) *worker.Job {
	t.Helper()
	j, err := b.client.Get(t.Context(), queue, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// writeFile writes data to a new file in a temporary directory.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHelpListsCommands(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, t.Context(), "help")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and the usage on stdout", code, stderr)
	}
	for _, name := range []string{"run", "dev", "enqueue", "inspect", "dead", "cancel", "queue", "bench", "config", "healthcheck", "completion", "version"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if !regexp.MustCompile(`(?m)^  ` + name + ` +\S`).MatchString(stdout) {
				t.Errorf("help does not list %s with its summary:\n%s", name, stdout)
			}
		})
	}
	for _, e := range exitCodes {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^  %d +\S`, e.code)).MatchString(stdout) {
			t.Errorf("help does not document exit code %d:\n%s", e.code, stdout)
		}
	}
}

// enqueued is what TestEnqueue checks after a successful enqueue.
type enqueued struct {
	job           *worker.Job
	before, after time.Time // around the command
}

func TestEnqueue(t *testing.T) {
	t.Parallel()
	// Whole seconds, in a zone other than UTC: the stored time must be the
	// same instant.
	at := time.Now().Add(2 * time.Hour).Truncate(time.Second).In(time.FixedZone("", 2*60*60))
	payload := []byte("\x00binary\xff payload\n")
	tests := []struct {
		name  string
		stdin string
		flags func(t *testing.T) []string
		check func(t *testing.T, e enqueued)
	}{
		{
			name:  "generated id",
			flags: func(*testing.T) []string { return []string{"--payload", "hello"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.State != worker.StateReady || string(e.job.Payload) != "hello" {
					t.Errorf("state %s, payload %q; want ready, hello", e.job.State, e.job.Payload)
				}
			},
		},
		{
			name:  "id",
			flags: func(*testing.T) []string { return []string{"--id", "order-42", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.ID != "order-42" {
					t.Errorf("id %q, want order-42", e.job.ID)
				}
			},
		},
		{
			name:  "delay",
			flags: func(*testing.T) []string { return []string{"--delay", "90m", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				// Redis's clock decides; it runs on this machine.
				lo, hi := e.before.Add(90*time.Minute-2*time.Second), e.after.Add(90*time.Minute+2*time.Second)
				if e.job.State != worker.StateScheduled || e.job.RunAt.Before(lo) || e.job.RunAt.After(hi) {
					t.Errorf("state %s, run at %s; want scheduled between %s and %s", e.job.State, e.job.RunAt, lo, hi)
				}
			},
		},
		{
			name:  "at",
			flags: func(*testing.T) []string { return []string{"--at", at.Format(time.RFC3339), "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.State != worker.StateScheduled || !e.job.RunAt.Equal(at) {
					t.Errorf("state %s, run at %s; want scheduled at %s", e.job.State, e.job.RunAt, at)
				}
			},
		},
		{
			name:  "at in the past runs now",
			flags: func(*testing.T) []string { return []string{"--at", "2001-02-03T04:05:06Z", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.State != worker.StateReady {
					t.Errorf("state %s, want ready", e.job.State)
				}
			},
		},
		{
			name:  "max attempts",
			flags: func(*testing.T) []string { return []string{"--max-attempts", "3", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.MaxAttempts != 3 || e.job.Attempt != 0 {
					t.Errorf("max attempts %d, attempts %d; want 3, 0", e.job.MaxAttempts, e.job.Attempt)
				}
			},
		},
		{
			name:  "queue defaults",
			flags: func(*testing.T) []string { return []string{"--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.MaxAttempts != 0 || e.job.Timeout != 0 {
					t.Errorf("max attempts %d, timeout %s; want 0 and 0 (the queue's)", e.job.MaxAttempts, e.job.Timeout)
				}
			},
		},
		{
			name:  "timeout",
			flags: func(*testing.T) []string { return []string{"--timeout", "90s", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.Timeout != 90*time.Second {
					t.Errorf("timeout %s, want 90s", e.job.Timeout)
				}
			},
		},
		{
			name:  "priority",
			flags: func(*testing.T) []string { return []string{"--priority", "high", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.Priority != worker.PriorityHigh {
					t.Errorf("priority %s, want high", e.job.Priority)
				}
			},
		},
		{
			name:  "priority in capitals",
			flags: func(*testing.T) []string { return []string{"--priority", "LOW", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.Priority != worker.PriorityLow {
					t.Errorf("priority %s, want low", e.job.Priority)
				}
			},
		},
		{
			name:  "unique key",
			flags: func(*testing.T) []string { return []string{"--unique-key", "order:42", "--payload", "x"} },
			check: func(t *testing.T, e enqueued) {
				if e.job.Priority != worker.PriorityNormal || e.job.UniqueKey != "order:42" || e.job.UniqueFor != 0 || e.job.UniqueAfterFinish {
					t.Errorf("priority %s, unique key %q for %s (after finish: %t); want normal, order:42 until it finishes",
						e.job.Priority, e.job.UniqueKey, e.job.UniqueFor, e.job.UniqueAfterFinish)
				}
			},
		},
		{
			name: "unique window after the finish",
			flags: func(*testing.T) []string {
				return []string{"--unique-key", "order:42", "--unique-for", "90m", "--unique-after-finish", "--payload", "x"}
			},
			check: func(t *testing.T, e enqueued) {
				if e.job.UniqueKey != "order:42" || e.job.UniqueFor != 90*time.Minute || !e.job.UniqueAfterFinish {
					t.Errorf("unique key %q for %s (after finish: %t); want order:42 for 90m after the finish", e.job.UniqueKey, e.job.UniqueFor, e.job.UniqueAfterFinish)
				}
			},
		},
		{
			name: "payload file",
			flags: func(t *testing.T) []string {
				return []string{"--payload-file", writeFile(t, "payload.bin", payload)}
			},
			check: func(t *testing.T, e enqueued) {
				if string(e.job.Payload) != string(payload) {
					t.Errorf("payload %q, want %q", e.job.Payload, payload)
				}
			},
		},
		{
			name:  "payload from stdin",
			stdin: "line one\nline two\n",
			flags: func(*testing.T) []string { return nil },
			check: func(t *testing.T, e enqueued) {
				if string(e.job.Payload) != "line one\nline two\n" {
					t.Errorf("payload %q, want stdin as is", e.job.Payload)
				}
			},
		},
		{
			name:  "empty payload",
			stdin: "ignored: --payload is given",
			flags: func(*testing.T) []string { return []string{"--payload", ""} },
			check: func(t *testing.T, e enqueued) {
				if len(e.job.Payload) != 0 {
					t.Errorf("payload %q, want empty", e.job.Payload)
				}
			},
		},
		{
			name: "payload at the limit",
			flags: func(t *testing.T) []string {
				return []string{"--config", writeConfig(t, "jobs: {max_payload_bytes: 10}\n"), "--payload", "0123456789"}
			},
			check: func(t *testing.T, e enqueued) {
				if string(e.job.Payload) != "0123456789" {
					t.Errorf("payload %q, want 0123456789", e.job.Payload)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			flags := append([]string{"--queue", "q"}, tt.flags(t)...)
			before := time.Now()
			code, stdout, stderr := b.run(t, tt.stdin, "enqueue", flags...)
			after := time.Now()
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			id := strings.TrimSpace(stdout)
			if id == "" || stdout != id+"\n" {
				t.Fatalf("stdout %q, want the job id on one line", stdout)
			}
			tt.check(t, enqueued{job: b.get(t, "q", id), before: before, after: after})
			if s := b.stats(t, "q"); s.Ready+s.Scheduled != 1 {
				t.Errorf("queue holds %+v, want the one job", s)
			}
		})
	}
}

func TestEnqueueDuplicateID(t *testing.T) { //nolint:tparallel // "again" waits for every attempt before the checks below
	t.Parallel()
	b := setupCLI(t)
	if code, stdout, stderr := b.run(t, "", "enqueue", "--queue", "q", "--id", "once", "--payload", "first"); code != 0 || stdout != "once\n" {
		t.Fatalf("first enqueue: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	tests := []struct {
		name  string
		flags []string
	}{
		{"same payload", []string{"--payload", "first"}},
		{"other payload", []string{"--payload", "second"}},
		{"other schedule", []string{"--payload", "second", "--delay", "1h", "--max-attempts", "7"}},
	}
	// Not parallel: the checks below wait for every attempt.
	t.Run("again", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				code, stdout, stderr := b.run(t, "", "enqueue", append([]string{"--queue", "q", "--id", "once"}, tt.flags...)...)
				if code != exitConflict || stdout != "" {
					t.Errorf("exit %d, stdout %q; want 4 and nothing", code, stdout)
				}
				for _, want := range []string{`"once"`, "already has a job", "nothing was changed"} {
					if !strings.Contains(stderr, want) {
						t.Errorf("stderr %q does not say %q", stderr, want)
					}
				}
			})
		}
	})
	j := b.get(t, "q", "once")
	if string(j.Payload) != "first" || j.State != worker.StateReady || j.MaxAttempts != 0 {
		t.Errorf("stored job: payload %q, state %s, max attempts %d; want the first job's", j.Payload, j.State, j.MaxAttempts)
	}
	if s := b.stats(t, "q"); s != (admin.QueueStats{Ready: 1}) {
		t.Errorf("queue q: %+v, want the one job", s)
	}
}

// TestEnqueueUniqueKey: an enqueue whose unique key another job holds
// is refused like an existing id (exit 1, nothing printed or changed),
// naming the job that holds the key.
func TestEnqueueUniqueKey(t *testing.T) { //nolint:tparallel // "again" waits for every attempt before the checks below
	t.Parallel()
	b := setupCLI(t)
	code, stdout, stderr := b.run(t, "", "enqueue", "--queue", "q", "--unique-key", "order:42", "--payload", "first")
	holder := strings.TrimSpace(stdout)
	if code != 0 || holder == "" {
		t.Fatalf("first enqueue: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	tests := []struct {
		name  string
		flags []string
	}{
		{"same payload", []string{"--payload", "first"}},
		{"an id of its own", []string{"--id", "order-42", "--payload", "second"}},
		{"another priority and a window", []string{"--payload", "second", "--priority", "high", "--unique-for", "1h"}},
	}
	// Not parallel: the checks below wait for every attempt.
	t.Run("again", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				code, stdout, stderr := b.run(t, "", "enqueue", append([]string{"--queue", "q", "--unique-key", "order:42"}, tt.flags...)...)
				if code != exitConflict || stdout != "" {
					t.Errorf("exit %d, stdout %q; want 4 and nothing", code, stdout)
				}
				for _, want := range []string{`unique key "order:42" is held by job "` + holder + `"`, "nothing was changed"} {
					if !strings.Contains(stderr, want) {
						t.Errorf("stderr %q does not say %q", stderr, want)
					}
				}
			})
		}
	})
	if j := b.get(t, "q", holder); string(j.Payload) != "first" || j.UniqueKey != "order:42" {
		t.Errorf("the holder: payload %q, unique key %q; want the first job's", j.Payload, j.UniqueKey)
	}
	if s := b.stats(t, "q"); s != (admin.QueueStats{Ready: 1}) {
		t.Errorf("queue q: %+v, want the one job", s)
	}
}

func TestEnqueueRefuses(t *testing.T) {
	t.Parallel()
	limit := "jobs: {max_payload_bytes: 10}\n"
	tests := []struct {
		name     string
		stdin    string
		flags    func(t *testing.T) []string
		code     int
		inStderr []string
	}{
		{"no queue", "", func(*testing.T) []string { return []string{"--payload", "x"} }, 2, []string{"--queue is required"}},
		{"delay and at", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--delay", "1m", "--at", "2030-01-01T00:00:00Z", "--payload", "x"}
		}, 2, []string{"--delay or --at, not both"}},
		{"zero delay and at", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--delay", "0s", "--at", "2030-01-01T00:00:00Z", "--payload", "x"}
		}, 2, []string{"not both"}},
		{"malformed at", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--at", "tomorrow 6pm", "--payload", "x"}
		}, 2, []string{`--at "tomorrow 6pm"`, "RFC 3339"}},
		{"at without zone", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--at", "2030-01-01T00:00:00", "--payload", "x"}
		}, 2, []string{"--at", "RFC 3339"}},
		{"at beyond the horizon", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--at", "2999-01-01T00:00:00Z", "--payload", "x"}
		}, 2, []string{"invalid --at", "horizon"}},
		{"max attempts 0", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--max-attempts", "0", "--payload", "x"}
		}, 2, []string{`invalid --max-attempts: "0" is no value`}},
		{"max attempts -1", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--max-attempts", "-1", "--payload", "x"}
		}, 2, []string{"invalid --max-attempts: must be 1 to 1000", "(got -1)"}},
		{"negative delay", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--delay", "-1s", "--payload", "x"}
		}, 2, []string{"invalid --delay: must not be negative"}},
		{"zero timeout", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--timeout", "0s", "--payload", "x"}
		}, 2, []string{`invalid --timeout: "0s" is no value`}},
		{"payload and payload file", "", func(t *testing.T) []string {
			return []string{"--queue", "q", "--payload", "x", "--payload-file", writeFile(t, "p", []byte("y"))}
		}, 2, []string{"--payload or --payload-file, not both"}},
		{"unknown flag", "", func(*testing.T) []string { return []string{"--queue", "q", "--urgency", "9"} },
			2, []string{"flag provided but not defined: --urgency"}},
		{"priority not a level", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--priority", "urgent", "--payload", "x"}
		}, 2, []string{`invalid --priority: "urgent" is not a priority; use low, normal or high`}},
		{"priority as a number", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--priority", "1", "--payload", "x"}
		}, 2, []string{`invalid --priority: "1" is not a priority`}},
		{"empty unique key", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--unique-key", "", "--payload", "x"}
		}, 2, []string{`invalid --unique-key: "" is no value`}},
		{"zero unique window", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--unique-key", "k", "--unique-for", "0s", "--payload", "x"}
		}, 2, []string{`invalid --unique-for: "0s" is no value`}},
		{"negative unique window", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--unique-key", "k", "--unique-for", "-1h", "--payload", "x"}
		}, 2, []string{"invalid --unique-for: must not be negative (got -1h0m0s)"}},
		{"unique window without a key", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--unique-for", "1h", "--payload", "x"}
		}, 2, []string{"invalid --unique-for: needs a unique key"}},
		{"after finish without a window", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--unique-key", "k", "--unique-after-finish", "--payload", "x"}
		}, 2, []string{"invalid --unique-after-finish: needs a window"}},
		{"unique window over a year", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--unique-key", "k", "--unique-for", "8761h", "--payload", "x"}
		}, 2, []string{"invalid --unique-for", "over the limit of 8760h0m0s"}},
		{"bad unique key", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--unique-key", "two words", "--payload", "x"}
		}, 2, []string{"invalid --unique-key", `"two words"`}},
		{"stray argument", "", func(*testing.T) []string { return []string{"--queue", "q", "hello"} },
			2, []string{`unexpected argument "hello"`}},
		{"bad queue name", "", func(*testing.T) []string { return []string{"--queue", "a{b}", "--payload", "x"} },
			2, []string{"invalid --queue", `"a{b}"`}},
		{"bad id", "", func(*testing.T) []string { return []string{"--queue", "q", "--id", "two words", "--payload", "x"} },
			2, []string{"invalid --id", `"two words"`}},
		{"payload over the limit from stdin", "0123456789A", func(t *testing.T) []string {
			return []string{"--queue", "q", "--config", writeConfig(t, limit)}
		}, 2, []string{"invalid --payload: is 11 bytes; the limit is 10"}},
		{"payload over the limit from a file", "", func(t *testing.T) []string {
			return []string{"--queue", "q", "--config", writeConfig(t, limit), "--payload-file", writeFile(t, "p", []byte("0123456789A"))}
		}, 2, []string{"invalid --payload: is 11 bytes; the limit is 10"}},
		{"payload over the limit from --payload", "", func(t *testing.T) []string {
			return []string{"--queue", "q", "--config", writeConfig(t, limit), "--payload", "0123456789A"}
		}, 2, []string{"invalid --payload: is 11 bytes; the limit is 10"}},
		{"missing payload file", "", func(t *testing.T) []string {
			return []string{"--queue", "q", "--payload-file", filepath.Join(t.TempDir(), "nope.json")}
		}, 1, []string{"--payload-file", "nope.json"}},
		{"unreachable Redis", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--payload", "x", "--redis", "127.0.0.1:1"}
		}, exitUnavailable, []string{"127.0.0.1:1"}},
		{"config with a bad key", "", func(t *testing.T) []string {
			return []string{"--queue", "q", "--payload", "x", "--config", writeConfig(t, "jobs:\n  max_payload_bytez: 10\n")}
		}, 1, []string{"invalid configuration", "jobs.max_payload_bytez"}},
		{"config with a bad value", "", func(t *testing.T) []string {
			return []string{"--queue", "q", "--payload", "x", "--config", writeConfig(t, "jobs: {max_payload_bytes: lots}\n")}
		}, 1, []string{"invalid configuration", "jobs.max_payload_bytes"}},
		{"missing config file", "", func(t *testing.T) []string {
			return []string{"--queue", "q", "--payload", "x", "--config", filepath.Join(t.TempDir(), "nope.yaml")}
		}, 1, []string{"config file", "nope.yaml"}},
		{"bad prefix", "", func(*testing.T) []string {
			return []string{"--queue", "q", "--payload", "x", "--prefix", "a b"}
		}, 1, []string{"redis.prefix"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			code, stdout, stderr := b.run(t, tt.stdin, "enqueue", tt.flags(t)...)
			if code != tt.code || stdout != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, tt.code)
			}
			for _, want := range tt.inStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
			}
			queues, err := allQueues(t.Context(), b.client)
			if err != nil {
				t.Fatal(err)
			}
			if s := b.stats(t, "q"); len(queues) > 0 || s != (admin.QueueStats{}) {
				t.Errorf("queues %v, queue q %+v; want nothing stored", queues, s)
			}
		})
	}
}

// queueList is inspect --json without --queue, as GET /v1/queues.
type queueList struct {
	Queues []wire.Queue `json:"queues"`
}

// payloadOf decodes the payload of a job printed with --json.
func payloadOf(t *testing.T, j wire.Job) string {
	t.Helper()
	if j.PayloadBase64 == nil {
		return string(j.Payload)
	}
	p, err := base64.StdEncoding.DecodeString(*j.PayloadBase64)
	if err != nil {
		t.Fatalf("job %s: payload_base64: %v", j.ID, err)
	}
	return string(p)
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not the JSON expected: %v\n%s", err, s)
	}
	return v
}

// tableRows splits inspect's table into rows of fields, header first.
func tableRows(s string) [][]string {
	var rows [][]string
	for _, l := range lines(s) {
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

func TestInspect(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.killJobs(t, "emails", "e-dead")
	b.enqueue(t,
		worker.JobSpec{Queue: "emails", ID: "e-later-1", Delay: time.Hour, MaxAttempts: 3, Payload: []byte("payload")},
		worker.JobSpec{Queue: "emails", ID: "e-later-2", Delay: 2 * time.Hour},
		worker.JobSpec{Queue: "emails", ID: "e-now-1"},
		worker.JobSpec{Queue: "emails", ID: "e-now-2"},
		worker.JobSpec{Queue: "emails", ID: "e-now-3", Payload: []byte{0xff, 0xfe}},
		worker.JobSpec{Queue: "emails", ID: "e-unique-1", Priority: worker.PriorityHigh, UniqueKey: "user:7"},
		worker.JobSpec{Queue: "emails", ID: "e-unique-2", Priority: worker.PriorityLow, UniqueKey: "user:8", UniqueFor: time.Hour},
		worker.JobSpec{Queue: "emails", ID: "e-unique-3", UniqueKey: "user:9", UniqueFor: 90 * time.Minute, UniqueAfterFinish: true},
		worker.JobSpec{Queue: "sms", ID: "s-now-1"},
	)
	emails := wire.Queue{Name: "emails", Jobs: wire.Counts{Scheduled: 2, Ready: 6, Dead: 1}, Workers: []wire.Process{}, Partitions: 1}
	sms := wire.Queue{Name: "sms", Jobs: wire.Counts{Ready: 1}, Workers: []wire.Process{}, Partitions: 1}
	header := []string{"QUEUE", "STATE", "SCHEDULED", "READY", "ACTIVE", "DEAD", "COMPLETED", "WORKERS", "LEADER"}
	row := func(q wire.Queue) []string {
		return []string{q.Name, "running", fmt.Sprint(q.Jobs.Scheduled), fmt.Sprint(q.Jobs.Ready), fmt.Sprint(q.Jobs.Active), fmt.Sprint(q.Jobs.Dead),
			fmt.Sprint(q.Jobs.Completed), "0", "-"}
	}
	sortRows := func(rows [][]string) {
		slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	}

	tests := []struct {
		name  string
		flags []string
		code  int
		check func(t *testing.T, stdout, stderr string)
	}{
		{"one queue", []string{"--queue", "emails"}, 0, func(t *testing.T, stdout, _ string) {
			want := [][]string{header, row(emails)}
			if got := tableRows(stdout); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("table %q, want %q", got, want)
			}
		}},
		{"one queue as JSON", []string{"--queue", "emails", "--json"}, 0, func(t *testing.T, stdout, _ string) {
			if got := decodeJSON[wire.Queue](t, stdout); !reflect.DeepEqual(got, emails) {
				t.Errorf("JSON %+v, want %+v", got, emails)
			}
		}},
		{"every queue", nil, 0, func(t *testing.T, stdout, _ string) {
			got := tableRows(stdout)
			if len(got) != 3 || !slices.Equal(got[0], header) {
				t.Fatalf("table %q, want the header and two rows", got)
			}
			sortRows(got[1:])
			if want := [][]string{header, row(emails), row(sms)}; !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("table %q, want %q", got, want)
			}
		}},
		{"every queue as JSON", []string{"--json"}, 0, func(t *testing.T, stdout, _ string) {
			got := decodeJSON[queueList](t, stdout).Queues
			if want := []wire.Queue{emails, sms}; !reflect.DeepEqual(got, want) {
				t.Errorf("JSON %+v, want %+v", got, want)
			}
		}},
		{"unknown queue", []string{"--queue", "nothing-here"}, 0, func(t *testing.T, stdout, _ string) {
			want := [][]string{header, row(wire.Queue{Name: "nothing-here"})}
			if got := tableRows(stdout); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("table %q, want %q", got, want)
			}
		}},
		{"no queues", []string{"--prefix", b.prefix + "-empty"}, 0, func(t *testing.T, stdout, _ string) {
			if got := tableRows(stdout); !slices.EqualFunc(got, [][]string{header}, slices.Equal) {
				t.Errorf("table %q, want the header alone", got)
			}
		}},
		{"no queues as JSON", []string{"--prefix", b.prefix + "-empty", "--json"}, 0, func(t *testing.T, stdout, _ string) {
			if got := decodeJSON[queueList](t, stdout).Queues; got == nil || len(got) != 0 {
				t.Errorf("JSON %q, want []", stdout)
			}
		}},
		{"scheduled job", []string{"--queue", "emails", "--job", "e-later-1"}, 0, func(t *testing.T, stdout, _ string) {
			j := b.get(t, "emails", "e-later-1")
			for _, re := range []string{
				`(?m)^id: +e-later-1$`,
				`(?m)^queue: +emails$`,
				`(?m)^state: +scheduled$`,
				`(?m)^attempts: +0 spent \(limit: 3\)$`,
				`(?m)^run at: +` + regexp.QuoteMeta(j.RunAt.UTC().Format(time.RFC3339Nano)) + ` \(in [0-9hms.]+\)$`,
				`(?m)^payload: +7 bytes: "payload"$`,
			} {
				if !regexp.MustCompile(re).MatchString(stdout) {
					t.Errorf("output does not match %s:\n%s", re, stdout)
				}
			}
		}},
		{"ready job with the queue's limit", []string{"--queue", "emails", "--job", "e-now-1"}, 0, func(t *testing.T, stdout, _ string) {
			for _, re := range []string{`(?m)^state: +ready$`, `(?m)^attempts: +0 spent \(limit: the queue's\)$`, `(?m)^priority: +normal$`, `(?m)^run at: .* ago\)$`, `(?m)^payload: +0 bytes: ""$`} {
				if !regexp.MustCompile(re).MatchString(stdout) {
					t.Errorf("output does not match %s:\n%s", re, stdout)
				}
			}
			if strings.Contains(stdout, "unique") {
				t.Errorf("a job without a unique key shows one:\n%s", stdout)
			}
		}},
		{"job with a unique key", []string{"--queue", "emails", "--job", "e-unique-1"}, 0, func(t *testing.T, stdout, _ string) {
			for _, re := range []string{`(?m)^priority: +high$`, `(?m)^unique key: +user:7 \(held until the job finishes\)$`} {
				if !regexp.MustCompile(re).MatchString(stdout) {
					t.Errorf("output does not match %s:\n%s", re, stdout)
				}
			}
		}},
		{"job with a unique window", []string{"--queue", "emails", "--job", "e-unique-2"}, 0, func(t *testing.T, stdout, _ string) {
			for _, re := range []string{`(?m)^priority: +low$`, `(?m)^unique key: +user:8 \(held until the job finishes, and for 1h0m0s after its enqueue\)$`} {
				if !regexp.MustCompile(re).MatchString(stdout) {
					t.Errorf("output does not match %s:\n%s", re, stdout)
				}
			}
		}},
		{"job with a unique window after its finish", []string{"--queue", "emails", "--job", "e-unique-3"}, 0, func(t *testing.T, stdout, _ string) {
			if re := `(?m)^unique key: +user:9 \(held until 1h30m0s after the job finishes\)$`; !regexp.MustCompile(re).MatchString(stdout) {
				t.Errorf("output does not match %s:\n%s", re, stdout)
			}
		}},
		{"job with a unique key as JSON", []string{"--queue", "emails", "--job", "e-unique-3", "--json"}, 0, func(t *testing.T, stdout, _ string) {
			got := decodeJSON[wire.Job](t, stdout)
			if got.Priority != "normal" || got.UniqueKey != "user:9" || got.UniqueFor != "1h30m0s" || !got.UniqueAfterFinish {
				t.Errorf("JSON %+v, want priority normal, unique key user:9 for 1h30m0s after the finish", got)
			}
		}},
		{"dead job", []string{"--queue", "emails", "--job", "e-dead"}, 0, func(t *testing.T, stdout, _ string) {
			for _, re := range []string{`(?m)^state: +dead$`, `(?m)^attempts: +1 spent`, `(?m)^died at: +\S+$`, `(?m)^last error: .*boom e-dead$`} {
				if !regexp.MustCompile(re).MatchString(stdout) {
					t.Errorf("output does not match %s:\n%s", re, stdout)
				}
			}
		}},
		{"job as JSON", []string{"--queue", "emails", "--job", "e-later-1", "--json"}, 0, func(t *testing.T, stdout, _ string) {
			j := b.get(t, "emails", "e-later-1")
			got := decodeJSON[wire.Job](t, stdout)
			if got.ID != "e-later-1" || got.Queue != "emails" || got.State != "scheduled" || got.Attempts != 0 ||
				got.MaxAttempts != 3 || payloadOf(t, got) != "payload" || got.Payload != nil || got.RunAt == nil || !got.RunAt.Equal(j.RunAt) ||
				got.EnqueuedAt == nil || !got.EnqueuedAt.Equal(j.EnqueuedAt) || got.DiedAt != nil || got.Priority != "normal" || got.UniqueKey != "" {
				t.Errorf("JSON %+v does not match the job %+v", got, j)
			}
		}},
		{"binary payload as JSON", []string{"--queue", "emails", "--job", "e-now-3", "--json"}, 0, func(t *testing.T, stdout, _ string) {
			got := decodeJSON[wire.Job](t, stdout)
			if got.State != "ready" || got.Payload != nil || got.PayloadBase64 == nil || *got.PayloadBase64 != "//4=" {
				t.Errorf("JSON %+v, want the payload in payload_base64", got)
			}
		}},
		{"missing job", []string{"--queue", "emails", "--job", "nope"}, exitNotFound, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, `"nope"`) || !strings.Contains(stderr, "not found") {
				t.Errorf("stderr %q does not say job nope was not found", stderr)
			}
		}},
		{"job without queue", []string{"--job", "e-now-1"}, 2, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "--job needs --queue") {
				t.Errorf("stderr %q", stderr)
			}
		}},
		{"bad queue name", []string{"--queue", "a{b}"}, exitUsage, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, `"a{b}"`) {
				t.Errorf("stderr %q does not name the queue", stderr)
			}
		}},
		{"unreachable Redis", []string{"--redis", "127.0.0.1:1"}, exitUnavailable, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "127.0.0.1:1") {
				t.Errorf("stderr %q does not name the address", stderr)
			}
		}},
		{"stray argument", []string{"emails"}, 2, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, `unexpected argument "emails"`) {
				t.Errorf("stderr %q", stderr)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := b.run(t, "", "inspect", tt.flags...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tt.code, stdout, stderr)
			}
			if code != 0 && stdout != "" {
				t.Errorf("stdout %q on failure, want nothing", stdout)
			}
			tt.check(t, stdout, stderr)
		})
	}
}

var moreRE = regexp.MustCompile(`(?m)^more: --cursor (\S+)$`)

// deadTable parses a page of dead list: rows of id, died at, attempts and
// last error, and the cursor of the next page.
func deadTable(t *testing.T, stdout string) (rows [][]string, next string) {
	t.Helper()
	ls := lines(stdout)
	if m := moreRE.FindStringSubmatch(stdout); m != nil {
		next = m[1]
		if ls[len(ls)-1] != m[0] {
			t.Errorf("the cursor is not on the last line:\n%s", stdout)
		}
		ls = ls[:len(ls)-1]
	}
	if len(ls) == 0 || !slices.Equal(strings.Fields(ls[0]), []string{"ID", "DIED", "AT", "ATTEMPTS", "LAST", "ERROR"}) {
		t.Fatalf("no header ID DIED AT ATTEMPTS LAST ERROR:\n%s", stdout)
	}
	for _, l := range ls[1:] {
		f := strings.Fields(l)
		if len(f) < 4 {
			t.Fatalf("row %q has no last error", l)
		}
		rows = append(rows, []string{f[0], f[1], f[2], strings.Join(f[3:], " ")})
	}
	return rows, next
}

func TestDeadList(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ids := []string{"d-0", "d-1", "d-2", "d-3", "d-4"}
	b.killJobs(t, "q", ids...)

	// checkRow checks a row against the job in the store.
	checkRow := func(t *testing.T, r []string) {
		t.Helper()
		j := b.get(t, "q", r[0])
		died, err := time.Parse(time.RFC3339Nano, r[1])
		if err != nil || !died.Equal(j.DiedAt) || r[2] != "1" || !strings.HasSuffix(r[3], "boom "+r[0]) {
			t.Errorf("row %q; want the job's death at %s, 1 attempt and its error %q", r, j.DiedAt, j.LastError)
		}
	}
	// pages follows the cursors from flags, returning the ids in order.
	pages := func(t *testing.T, limit int, flags ...string) []string {
		t.Helper()
		var got []string
		cursor := ""
		for page := 0; ; page++ {
			if page > len(ids) {
				t.Fatalf("more than %d pages", page)
			}
			args := append([]string{"--queue", "q", "--limit", fmt.Sprint(limit), "--cursor", cursor}, flags...)
			code, stdout, stderr := b.run(t, "", "dead list", args...)
			if code != 0 {
				t.Fatalf("page %d: exit %d, stderr %q", page, code, stderr)
			}
			var n int
			if slices.Contains(flags, "--json") {
				out := decodeJSON[wire.Page](t, stdout)
				for _, j := range out.Jobs {
					got = append(got, j.ID)
				}
				n, cursor = len(out.Jobs), ""
				if out.NextCursor != nil {
					cursor = *out.NextCursor
				}
			} else {
				var rows [][]string
				rows, cursor = deadTable(t, stdout)
				for _, r := range rows {
					checkRow(t, r)
					got = append(got, r[0])
				}
				n = len(rows)
			}
			if n > limit || n < limit && cursor != "" {
				t.Errorf("page %d has %d jobs and next %q; want %d, or fewer on the last", page, n, cursor, limit)
			}
			if cursor == "" {
				return got
			}
		}
	}

	tests := []struct {
		name  string
		flags []string
		code  int
		check func(t *testing.T, stdout, stderr string)
	}{
		{"table", nil, 0, func(t *testing.T, stdout, _ string) {
			rows, next := deadTable(t, stdout)
			if len(rows) != len(ids) || next != "" {
				t.Errorf("%d rows, next %q; want %d and no cursor", len(rows), next, len(ids))
			}
			var got []string
			for _, r := range rows {
				checkRow(t, r)
				got = append(got, r[0])
			}
			if slices.Sort(got); !slices.Equal(got, ids) {
				t.Errorf("ids %v, want %v", got, ids)
			}
		}},
		{"JSON", []string{"--json"}, 0, func(t *testing.T, stdout, _ string) {
			out := decodeJSON[wire.Page](t, stdout)
			if len(out.Jobs) != len(ids) || out.NextCursor != nil {
				t.Fatalf("%d jobs, next %v; want %d and none", len(out.Jobs), out.NextCursor, len(ids))
			}
			for _, got := range out.Jobs {
				j := b.get(t, "q", got.ID)
				if got.Queue != "q" || got.State != "dead" || got.Attempts != 1 || got.DiedAt == nil || !got.DiedAt.Equal(j.DiedAt) ||
					got.LastError != j.LastError || !strings.Contains(got.LastError, "boom "+got.ID) || payloadOf(t, got) != "payload of "+got.ID {
					t.Errorf("JSON %+v does not match the job %+v", got, j)
				}
			}
		}},
		{"empty queue", []string{"--queue", "other"}, 0, func(t *testing.T, stdout, _ string) {
			if rows, next := deadTable(t, stdout); len(rows) != 0 || next != "" {
				t.Errorf("rows %q, next %q; want none", rows, next)
			}
		}},
		{"empty queue as JSON", []string{"--queue", "other", "--json"}, 0, func(t *testing.T, stdout, _ string) {
			if out := decodeJSON[wire.Page](t, stdout); out.Jobs == nil || len(out.Jobs) != 0 || out.NextCursor != nil {
				t.Errorf("JSON %q, want no jobs and no next", stdout)
			}
		}},
		{"bad cursor", []string{"--cursor", "not-a-cursor"}, exitUsage, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "cursor") {
				t.Errorf("stderr %q does not name the cursor", stderr)
			}
		}},
		{"limit too large", []string{"--limit", "1001"}, 2, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "limit") {
				t.Errorf("stderr %q does not name the limit", stderr)
			}
		}},
		{"unreachable Redis", []string{"--redis", "127.0.0.1:1"}, exitUnavailable, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, "127.0.0.1:1") {
				t.Errorf("stderr %q does not name the address", stderr)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			flags := tt.flags
			if !slices.Contains(flags, "--queue") {
				flags = append([]string{"--queue", "q"}, flags...)
			}
			code, stdout, stderr := b.run(t, "", "dead list", flags...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, tt.code, stdout, stderr)
			}
			tt.check(t, stdout, stderr)
		})
	}
	for _, limit := range []int{1, 2, 4, 5} {
		for _, format := range []string{"table", "JSON"} {
			t.Run(fmt.Sprintf("pages of %d as %s", limit, format), func(t *testing.T) {
				t.Parallel()
				var flags []string
				if format == "JSON" {
					flags = []string{"--json"}
				}
				got := pages(t, limit, flags...)
				sorted := slices.Sorted(slices.Values(got))
				if len(got) != len(ids) || !slices.Equal(slices.Compact(sorted), ids) {
					t.Errorf("pages listed %v, want each of %v once", got, ids)
				}
			})
		}
	}
}

func TestDeadRequeuePurge(t *testing.T) {
	t.Parallel()
	ids := []string{"d-0", "d-1", "d-2"}
	tests := []struct {
		name   string
		flags  []string
		code   int
		stdout string // the whole line, or "" on failure
		stderr string
		after  admin.QueueStats // of queue q; a ready job "alive" is there too
		check  func(t *testing.T, b *cliBundle)
	}{
		{
			name: "requeue one", flags: []string{"requeue", "--job", "d-1"}, stdout: "requeued 1 dead job(s) of queue q\n",
			after: admin.QueueStats{Ready: 2, Dead: 2},
			check: func(t *testing.T, b *cliBundle) {
				j := b.get(t, "q", "d-1")
				if j.State != worker.StateReady || j.Attempt != 0 || !strings.Contains(j.LastError, "boom d-1") {
					t.Errorf("requeued job: state %s, %d attempts, last error %q; want ready, 0, kept", j.State, j.Attempt, j.LastError)
				}
			},
		},
		{
			name: "requeue all", flags: []string{"requeue", "--all"}, stdout: "requeued 3 dead job(s) of queue q\n",
			after: admin.QueueStats{Ready: 4},
			check: func(t *testing.T, b *cliBundle) {
				for _, id := range ids {
					if j := b.get(t, "q", id); j.State != worker.StateReady || j.Attempt != 0 {
						t.Errorf("job %s: state %s, %d attempts; want ready, 0", id, j.State, j.Attempt)
					}
				}
			},
		},
		{
			name: "purge one", flags: []string{"purge", "--job", "d-1"}, stdout: "purged 1 dead job(s) of queue q\n",
			after: admin.QueueStats{Ready: 1, Dead: 2},
			check: func(t *testing.T, b *cliBundle) {
				if _, err := b.client.Get(t.Context(), "q", "d-1"); !errors.Is(err, worker.ErrNotFound) {
					t.Errorf("purged job: Get returned %v, want ErrNotFound", err)
				}
			},
		},
		{
			name: "purge all", flags: []string{"purge", "--all", "--yes"}, stdout: "purged 3 dead job(s) of queue q\n",
			after: admin.QueueStats{Ready: 1},
		},
		{
			name: "requeue all of an empty queue", flags: []string{"requeue", "--all", "--queue", "empty"},
			stdout: "requeued 0 dead job(s) of queue empty\n", after: admin.QueueStats{Ready: 1, Dead: 3},
		},
		{
			name: "purge all of an empty queue", flags: []string{"purge", "--all", "--yes", "--queue", "empty"},
			stdout: "purged 0 dead job(s) of queue empty\n", after: admin.QueueStats{Ready: 1, Dead: 3},
		},
		{
			name: "requeue a missing job", flags: []string{"requeue", "--job", "nope"}, code: exitNotFound,
			stderr: `queue "q" has no dead job "nope"; nothing was changed`, after: admin.QueueStats{Ready: 1, Dead: 3},
		},
		{
			name: "purge a missing job", flags: []string{"purge", "--job", "nope"}, code: exitNotFound,
			stderr: `queue "q" has no dead job "nope"; nothing was changed`, after: admin.QueueStats{Ready: 1, Dead: 3},
		},
		{
			name: "requeue a job that is not dead", flags: []string{"requeue", "--job", "alive"}, code: exitNotFound,
			stderr: `no dead job "alive"`, after: admin.QueueStats{Ready: 1, Dead: 3},
		},
		{
			name: "purge a job that is not dead", flags: []string{"purge", "--job", "alive"}, code: exitNotFound,
			stderr: `no dead job "alive"`, after: admin.QueueStats{Ready: 1, Dead: 3},
			check: func(t *testing.T, b *cliBundle) {
				if j := b.get(t, "q", "alive"); j.State != worker.StateReady {
					t.Errorf("job alive is %s, want ready", j.State)
				}
			},
		},
		{
			name: "bad id", flags: []string{"purge", "--job", "two words"}, code: exitUsage,
			stderr: "invalid --job", after: admin.QueueStats{Ready: 1, Dead: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			b.killJobs(t, "q", ids...)
			b.enqueue(t, worker.JobSpec{Queue: "q", ID: "alive"})
			flags := tt.flags[1:]
			if !slices.Contains(flags, "--queue") {
				flags = append([]string{"--queue", "q"}, flags...)
			}
			code, stdout, stderr := b.run(t, "", "dead "+tt.flags[0], flags...)
			if code != tt.code || stdout != tt.stdout || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
			if s := b.stats(t, "q"); s != tt.after {
				t.Errorf("queue q afterwards: %+v, want %+v", s, tt.after)
			}
			if tt.check != nil {
				tt.check(t, b)
			}
		})
	}
}

func TestDeadUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cmd      string
		flags    []string
		code     int
		inStderr string
	}{
		{"no action", "dead", []string{"--queue", "q"}, 2, "name an action: list, requeue or purge"},
		{"unknown action", "dead resurrect", []string{"--queue", "q"}, 2, `unknown action "resurrect"`},
		{"action help", "dead requeue", []string{"-h"}, 0, "--all"},
		{"list without queue", "dead list", nil, 2, "--queue is required"},
		{"requeue without queue", "dead requeue", []string{"--all"}, 2, "--queue is required"},
		{"purge without queue", "dead purge", []string{"--job", "x"}, 2, "--queue is required"},
		{"requeue with job and all", "dead requeue", []string{"--queue", "q", "--job", "x", "--all"}, 2, "select the dead (or cancelled) jobs one way"},
		{"requeue with neither", "dead requeue", []string{"--queue", "q"}, 2, "select the dead (or cancelled) jobs one way"},
		{"purge with job and all", "dead purge", []string{"--queue", "q", "--job", "x", "--all"}, 2, "select the dead (or cancelled) jobs one way"},
		{"purge with neither", "dead purge", []string{"--queue", "q"}, 2, "select the dead (or cancelled) jobs one way"},
		{"list with job", "dead list", []string{"--queue", "q", "--job", "x"}, 2, "flag provided but not defined: --job"},
		{"stray argument", "dead purge", []string{"--queue", "q", "--all", "now"}, 2, `unexpected argument "now"`},
		{"purge all without --yes off a terminal", "dead purge", []string{"--queue", "q", "--all"}, 2, "give --yes to confirm"},
		{"filter and ids", "dead requeue", []string{"--queue", "q", "--job", "x", "--error", "boom"}, 2, "select the dead (or cancelled) jobs one way"},
		{"negative age", "dead purge", []string{"--queue", "q", "--older-than", "-1h"}, 2, "--older-than must not be negative"},
	}
	// Without --redis and --prefix first: the action must come first.
	bare := []bareCase{
		{"nothing", []string{"dead"}, 2, "name an action: list, requeue or purge"},
		{"help", []string{"dead", "-h"}, 0, "Usage: courier dead list|requeue|purge"},
		{"flags before the action", []string{"dead", "--queue", "q", "list"}, 2, "name an action"},
	}
	checkBare(t, bare)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			b.killJobs(t, "q", "x")
			code, stdout, stderr := b.run(t, "", tt.cmd, tt.flags...)
			checkOutput(t, code, stdout, stderr, tt.code, tt.inStderr)
			if s := b.stats(t, "q"); s != (admin.QueueStats{Dead: 1}) {
				t.Errorf("queue q afterwards: %+v, want the dead job alone", s)
			}
		})
	}
}

// TestDeadActionHelp: each action's help shows its own flags, not another
// action's; help goes to stdout, and "courier help dead ACTION" is the
// same as "courier dead ACTION -h".
func TestDeadActionHelp(t *testing.T) {
	t.Parallel()
	own := map[string][]string{"list": {"--limit"}, "requeue": {"--job", "--all", "--dry-run"}, "purge": {"--job", "--all", "--dry-run", "--yes"}}
	for action, flags := range own {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, t.Context(), "dead", action, "-h")
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			for other, otherFlags := range own {
				for _, f := range otherFlags {
					if want := slices.Contains(flags, f); strings.Contains(stdout, f) != want {
						t.Errorf("dead %s -h shows %s: %t, want %t (a flag of %s)\n%s", action, f, !want, want, other, stdout)
					}
				}
			}
			if _, viaHelp, _ := runCLI(t, t.Context(), "help", "dead", action); viaHelp != stdout {
				t.Errorf("courier help dead %s:\n%s\nwant what -h prints:\n%s", action, viaHelp, stdout)
			}
		})
	}
}

// bareCase is a command run without --redis and --prefix, that must exit
// with code and print want (see checkOutput).
type bareCase struct {
	name string
	args []string
	code int
	want string
}

// checkBare runs each case in a parallel subtest.
func checkBare(t *testing.T, cases []bareCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, t.Context(), tt.args...)
			checkOutput(t, code, stdout, stderr, tt.code, tt.want)
		})
	}
}

// checkOutput checks the CLI's convention for a command that printed no
// result: exit 0 is help, want on stdout and nothing on stderr; any other
// code prints nothing on stdout and want on stderr, then for a usage error
// the hint to the command's help.
func checkOutput(t *testing.T, code int, stdout, stderr string, wantCode int, want string) {
	t.Helper()
	out, other := stderr, stdout
	if wantCode == 0 {
		out, other = stdout, stderr
	}
	if code != wantCode || other != "" || !strings.Contains(out, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q on the %s alone", code, stdout, stderr, wantCode, want, map[bool]string{true: "stdout", false: "stderr"}[wantCode == 0])
	}
	if code == exitUsage && !regexp.MustCompile(`(?m)^Run 'courier help[^']*' for `).MatchString(stderr) {
		t.Errorf("a usage error without the hint to the help:\n%s", stderr)
	}
	if code == exitUsage && strings.Contains(stderr, "Flags:") {
		t.Errorf("a usage error prints the flags:\n%s", stderr)
	}
}

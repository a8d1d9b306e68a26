package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// readyServer serves /readyz with status code, as a daemon would.
func readyServer(t *testing.T, code int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(code)
		fmt.Fprintln(w, map[int]string{200: "ready", 503: "draining"}[code])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestExitCodes runs every command through run and checks its exit code
// for each outcome it can have: ok (where cheap), usage error, not found,
// conflict, and Redis down (a closed port).
func TestExitCodes(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.killJobs(t, "q", "dead-1")
	b.enqueue(t, worker.JobSpec{Queue: "q", ID: "taken", Delay: time.Hour}, worker.JobSpec{Queue: "q", ID: "cancel-me", Delay: time.Hour})
	down := closedAddr(t)
	ready := readyServer(t, http.StatusOK).URL + "/readyz"
	draining := readyServer(t, http.StatusServiceUnavailable).URL + "/readyz"
	runCfg := writeConfig(t, logConfig(b.addr, b.prefix, "127.0.0.1:0"))
	badCfg := writeConfig(t, "jobs: {max_payload_bytez: 1}\n")

	type tc struct {
		args    []string
		code    int
		redis   bool // add the bundle's --redis and --prefix
		stopped bool // run with a context that has ended (the daemons stop at once)
	}
	cases := map[string][]struct {
		outcome string
		tc
	}{
		"run": {
			{"ok", tc{args: []string{"run", "--config", runCfg}, stopped: true}},
			{"usage", tc{args: []string{"run", "--config", runCfg, "now"}, code: exitUsage}},
			{"failure", tc{args: []string{"run", "--config", badCfg}, code: exitFailure}},
		},
		"dev": {
			{"ok", tc{args: []string{"dev", "--http-addr", "127.0.0.1:0", "--demo-jobs=false"}, stopped: true}},
			{"usage", tc{args: []string{"dev", "--http-addr", "0.0.0.0:0"}, code: exitUsage}},
		},
		"enqueue": {
			{"ok", tc{args: []string{"enqueue", "--queue", "q", "--payload", "x"}, redis: true}},
			{"usage", tc{args: []string{"enqueue", "--queue", "q", "--delay", "-5s"}, code: exitUsage, redis: true}},
			{"usage: a bad --priority", tc{args: []string{"enqueue", "--queue", "q", "--priority", "9"}, code: exitUsage, redis: true}},
			{"usage: a value the library refuses", tc{args: []string{"enqueue", "--queue", "q", "--id", "a b", "--payload", "x"}, code: exitUsage, redis: true}},
			{"usage: a malformed --header", tc{args: []string{"enqueue", "--queue", "q", "--header", "tenant", "--payload", "x"}, code: exitUsage, redis: true}},
			{"usage: a header the library refuses", tc{args: []string{"enqueue", "--queue", "q", "--header", "Tenant=x", "--payload", "x"}, code: exitUsage, redis: true}},
			{"conflict", tc{args: []string{"enqueue", "--queue", "q", "--id", "taken", "--payload", "x"}, code: exitConflict, redis: true}},
			{"not replicated", tc{args: []string{"enqueue", "--queue", "q", "--payload", "x", "--replicas", "1", "--replicas-timeout", "1ms"}, code: exitCodeOf(wire.CodeNotReplicated), redis: true}},
			{"Redis down", tc{args: []string{"enqueue", "--queue", "q", "--payload", "x", "--redis", down}, code: exitUnavailable}},
		},
		"inspect": {
			{"ok", tc{args: []string{"inspect"}, redis: true}},
			{"usage", tc{args: []string{"inspect", "--job", "x"}, code: exitUsage, redis: true}},
			{"not found", tc{args: []string{"inspect", "--queue", "q", "--job", "nope"}, code: exitNotFound, redis: true}},
			{"Redis down", tc{args: []string{"inspect", "--redis", down}, code: exitUnavailable}},
		},
		"dead list": {
			{"ok", tc{args: []string{"dead", "list", "--queue", "q"}, redis: true}},
			{"usage", tc{args: []string{"dead", "list", "--queue", "q", "--limit", "0"}, code: exitUsage, redis: true}},
			{"usage: a bad cursor", tc{args: []string{"dead", "list", "--queue", "q", "--cursor", "x"}, code: exitUsage, redis: true}},
			{"Redis down", tc{args: []string{"dead", "list", "--queue", "q", "--redis", down}, code: exitUnavailable}},
		},
		"jobs list": {
			{"ok", tc{args: []string{"jobs", "list", "--queue", "q", "--state", "scheduled"}, redis: true}},
			{"ok: completed", tc{args: []string{"jobs", "list", "--queue", "q", "--state", "completed"}, redis: true}},
			{"usage", tc{args: []string{"jobs", "list", "--queue", "q", "--state", "done"}, code: exitUsage, redis: true}},
			{"Redis down", tc{args: []string{"jobs", "list", "--queue", "q", "--state", "ready", "--redis", down}, code: exitUnavailable}},
		},
		"dead requeue": {
			{"ok", tc{args: []string{"dead", "requeue", "--queue", "other", "--all"}, redis: true}},
			{"usage", tc{args: []string{"dead", "requeue", "--queue", "q"}, code: exitUsage, redis: true}},
			{"not found", tc{args: []string{"dead", "requeue", "--queue", "q", "--job", "nope"}, code: exitNotFound, redis: true}},
			{"Redis down", tc{args: []string{"dead", "requeue", "--queue", "q", "--all", "--redis", down}, code: exitUnavailable}},
		},
		"dead purge": {
			{"ok", tc{args: []string{"dead", "purge", "--queue", "other", "--all", "--yes"}, redis: true}},
			{"usage", tc{args: []string{"dead", "purge", "--queue", "q", "--job", "x", "--all"}, code: exitUsage, redis: true}},
			{"not found", tc{args: []string{"dead", "purge", "--queue", "q", "--job", "taken"}, code: exitNotFound, redis: true}},
			{"Redis down", tc{args: []string{"dead", "purge", "--queue", "q", "--all", "--redis", down}, code: exitUnavailable}},
		},
		"cancel": {
			{"ok", tc{args: []string{"cancel", "--queue", "q", "--job", "cancel-me"}, redis: true}},
			{"usage", tc{args: []string{"cancel", "--queue", "q"}, code: exitUsage, redis: true}},
			{"not found", tc{args: []string{"cancel", "--queue", "q", "--job", "nope"}, code: exitNotFound, redis: true}},
			{"conflict", tc{args: []string{"cancel", "--queue", "q", "--job", "dead-1"}, code: exitConflict, redis: true}},
			{"Redis down", tc{args: []string{"cancel", "--queue", "q", "--job", "x", "--redis", down}, code: exitUnavailable}},
		},
		"queue": {
			{"ok: pause", tc{args: []string{"queue", "pause", "--queue", "pq"}, redis: true}},
			{"ok: resume", tc{args: []string{"queue", "resume", "--queue", "rq"}, redis: true}},
			{"ok: status", tc{args: []string{"queue", "status", "--queue", "q"}, redis: true}},
			{"usage: pause", tc{args: []string{"queue", "pause"}, code: exitUsage, redis: true}},
			{"usage: resume", tc{args: []string{"queue", "resume", "--queue", "a{b}"}, code: exitUsage, redis: true}},
			{"usage: status", tc{args: []string{"queue", "status", "--queue", "q", "--job", "x"}, code: exitUsage, redis: true}},
			{"usage: no action", tc{args: []string{"queue", "stop"}, code: exitUsage}},
			{"Redis down: pause", tc{args: []string{"queue", "pause", "--queue", "q", "--redis", down}, code: exitUnavailable}},
			{"Redis down: resume", tc{args: []string{"queue", "resume", "--queue", "q", "--redis", down}, code: exitUnavailable}},
			{"Redis down: status", tc{args: []string{"queue", "status", "--queue", "q", "--redis", down}, code: exitUnavailable}},
			{"ok: wait", tc{args: []string{"queue", "wait", "--queue", "empty"}, redis: true}},
			{"failure: wait past --timeout", tc{args: []string{"queue", "wait", "--queue", "q", "--timeout", "50ms"}, code: exitFailure, redis: true}},
			{"usage: wait", tc{args: []string{"queue", "wait", "--queue", "q", "--timeout", "-1s"}, code: exitUsage, redis: true}},
			{"Redis down: wait", tc{args: []string{"queue", "wait", "--queue", "q", "--redis", down}, code: exitUnavailable}},
			{"ok: forget", tc{args: []string{"queue", "forget", "--queue", "never-used"}, redis: true}},
			{"conflict: forget", tc{args: []string{"queue", "forget", "--queue", "q"}, code: exitConflict, redis: true}},
			{"Redis down: forget", tc{args: []string{"queue", "forget", "--queue", "q", "--redis", down}, code: exitUnavailable}},
		},
		"keys": {
			{"ok: list", tc{args: []string{"keys", "list", "--queue", "q"}, redis: true}},
			{"ok: show", tc{args: []string{"keys", "show", "--queue", "q", "--key", "acme"}, redis: true}},
			{"ok: set", tc{args: []string{"keys", "set", "--queue", "kq", "--key", "acme", "--concurrency", "3"}, redis: true}},
			{"ok: reset", tc{args: []string{"keys", "reset", "--queue", "kq", "--key", "globex"}, redis: true}},
			{"usage: list", tc{args: []string{"keys", "list", "--queue", "q", "--top", "0"}, code: exitUsage, redis: true}},
			{"usage: show", tc{args: []string{"keys", "show", "--queue", "q"}, code: exitUsage, redis: true}},
			{"usage: set", tc{args: []string{"keys", "set", "--queue", "q", "--key", "acme", "--weight", "1001"}, code: exitUsage, redis: true}},
			{"usage: reset", tc{args: []string{"keys", "reset", "--queue", "q", "--key", "a b"}, code: exitUsage, redis: true}},
			{"usage: no action", tc{args: []string{"keys"}, code: exitUsage}},
			{"Redis down: list", tc{args: []string{"keys", "list", "--queue", "q", "--redis", down}, code: exitUnavailable}},
			{"Redis down: show", tc{args: []string{"keys", "show", "--queue", "q", "--key", "acme", "--redis", down}, code: exitUnavailable}},
			{"Redis down: set", tc{args: []string{"keys", "set", "--queue", "q", "--key", "acme", "--concurrency", "1", "--redis", down}, code: exitUnavailable}},
			{"Redis down: reset", tc{args: []string{"keys", "reset", "--queue", "q", "--key", "acme", "--redis", down}, code: exitUnavailable}},
		},
		"bench": {
			{"usage", tc{args: []string{"bench", "--mode", "fast"}, code: exitUsage}},
			{"Redis down", tc{args: []string{"bench", "--redis", down, "--n", "1"}, code: exitUnavailable}},
		},
		"version": {
			{"ok", tc{args: []string{"version", "--json"}}},
			{"usage", tc{args: []string{"version", "now"}, code: exitUsage}},
		},
		"completion": {
			{"ok", tc{args: []string{"completion", "fish"}}},
			{"usage", tc{args: []string{"completion", "tcsh"}, code: exitUsage}},
		},
		"import asynq": {
			{"ok", tc{args: []string{"import", "asynq", "--from", "redis://" + b.addr + "/0", "--queues", "none-such"}, redis: true}},
			{"usage", tc{args: []string{"import", "asynq", "--queues", "a"}, code: exitUsage, redis: true}},
			{"usage: a bad --map", tc{args: []string{"import", "asynq", "--from", "redis://" + b.addr + "/0", "--map", "a=b{c}"}, code: exitUsage, redis: true}},
			{"usage: --from and --from-cluster", tc{args: []string{"import", "asynq", "--from", "redis://" + b.addr + "/0", "--from-cluster", b.addr}, code: exitUsage, redis: true}},
			{"usage: a database in --from-cluster", tc{args: []string{"import", "asynq", "--from-cluster", "redis://" + b.addr + "/1"}, code: exitUsage, redis: true}},
			{"failure: --from-cluster names a Redis that is not a Cluster", tc{args: []string{"import", "asynq", "--from-cluster", b.addr}, code: exitFailure, redis: true}},
			{"Redis down: --from-cluster", tc{args: []string{"import", "asynq", "--from-cluster", down, "--redis", down}, code: exitUnavailable}},
			{"Redis down", tc{args: []string{"import", "asynq", "--from", "redis://" + down + "/0", "--redis", down}, code: exitUnavailable}},
		},
		"healthcheck": {
			{"ok", tc{args: []string{"healthcheck", "--url", ready}}},
			{"not ready", tc{args: []string{"healthcheck", "--url", draining}, code: exitFailure}},
			{"not reached", tc{args: []string{"healthcheck", "--url", "http://" + down + "/readyz"}, code: exitFailure}},
			{"usage", tc{args: []string{"healthcheck", "--timeout", "0s"}, code: exitUsage}},
		},
		"config": {
			{"ok", tc{args: []string{"config", "check", "--config", runCfg}}},
			{"usage", tc{args: []string{"config", "check", "--queue", "q"}, code: exitUsage}},
			{"failure", tc{args: []string{"config", "check", "--config", badCfg}, code: exitFailure}},
		},
		"help": {
			{"ok", tc{args: []string{"help", "dead", "list"}}},
			{"usage", tc{args: []string{"help", "nothing"}, code: exitUsage}},
		},
	}
	// Every command, and every action of dead and jobs, has its cases.
	for name, cmd := range commands() {
		_, whole := cases[name]
		for _, a := range cmd.actions {
			if _, ok := cases[name+" "+a.name]; !ok && !whole {
				t.Errorf("no exit-code cases for courier %s %s", name, a.name)
			}
		}
		if len(cmd.actions) == 0 && !whole {
			t.Errorf("no exit-code cases for courier %s", name)
		}
	}
	for cmd, outcomes := range cases {
		for _, o := range outcomes {
			t.Run(cmd+"/"+o.outcome, func(t *testing.T) {
				t.Parallel()
				args := o.args
				if o.redis {
					args = append(append([]string{}, args...), "--redis", b.addr, "--prefix", b.prefix)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				if o.stopped {
					var stop context.CancelFunc
					ctx, stop = context.WithCancel(ctx)
					stop()
				}
				code, stdout, stderr := runCLI(t, ctx, args...)
				if code != o.code {
					t.Errorf("courier %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, o.code, stdout, stderr)
				}
			})
		}
	}
}

// TestJSONErrors: with --json a failure prints {"error": {...}} on stdout,
// with the code the HTTP API would answer, and the message on stderr.
func TestJSONErrors(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.enqueue(t, worker.JobSpec{Queue: "q", ID: "taken", Delay: time.Hour})
	tests := []struct {
		name string
		args []string
		exit int
		want wire.Error // Message: a part of it
	}{
		{"not found", []string{"inspect", "--queue", "q", "--job", "nope"}, exitNotFound,
			wire.Error{Code: wire.CodeNotFound, Message: "not found"}},
		{"existing id", []string{"enqueue", "--queue", "q", "--id", "taken", "--payload", "x"}, exitConflict,
			wire.Error{Code: wire.CodeConflict, Message: `already has a job with id "taken"`, ExistingID: "taken"}},
		{"missing flag", []string{"cancel", "--queue", "q"}, exitUsage,
			wire.Error{Code: wire.CodeInvalidField, Message: "--job is required"}},
		{"bad flag value", []string{"dead", "list", "--queue", "q", "--limit", "0"}, exitUsage,
			wire.Error{Code: wire.CodeInvalidField, Message: "--limit must be 1 to 1000", Field: "--limit"}},
		{"value the library refuses", []string{"queue", "status", "--queue", "a{b}"}, exitUsage,
			wire.Error{Code: wire.CodeInvalidField, Message: "invalid --queue", Field: "--queue"}},
		{"Redis down", []string{"dead", "requeue", "--queue", "q", "--all", "--redis", closedAddr(t)}, exitUnavailable,
			wire.Error{Code: wire.CodeUnavailable, Message: "connect to Redis at"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{}, tt.args...), "--json")
			if !strings.Contains(strings.Join(args, " "), "--redis") {
				args = append(args, "--redis", b.addr, "--prefix", b.prefix)
			}
			code, stdout, stderr := runCLI(t, t.Context(), args...)
			got := decodeJSON[wire.ErrorReply](t, stdout).Error
			if code != tt.exit || got.Code != tt.want.Code || !strings.Contains(got.Message, tt.want.Message) ||
				got.Field != tt.want.Field || got.ExistingID != tt.want.ExistingID {
				t.Errorf("exit %d, %+v; want %d, %+v", code, got, tt.exit, tt.want)
			}
			if !strings.Contains(stderr, tt.want.Message) {
				t.Errorf("stderr %q does not say %q", stderr, tt.want.Message)
			}
		})
	}
}

// TestInspectShowsFleet: inspect and queue status show the queue's leader
// and the processes serving it, as a table and as the API's JSON.
func TestInspectShowsFleet(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	reg := worker.NewRegistry()
	noop := func(context.Context, *worker.Job) error { return nil }
	if err := reg.Register("served", worker.HandlerFunc(noop), worker.QueueOptions{Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	d, err := worker.NewDaemon(testkit.Single(t), reg, worker.Config{Prefix: b.prefix, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	var v wire.Queue
	testkit.EventuallyState(t, 30*time.Second, func() (bool, string) {
		code, stdout, stderr := b.run(t, "", "inspect", "--queue", "served", "--json")
		if code != 0 {
			return false, stderr
		}
		v = decodeJSON[wire.Queue](t, stdout)
		return v.Leader != nil && len(v.Workers) == 1, stdout
	})
	if *v.Leader != d.ID() || v.Workers[0].ID != d.ID() || !v.Workers[0].Leader || v.Concurrency != 3 {
		t.Errorf("inspect --json: %+v; want %s leading, alone, concurrency 3", v, d.ID())
	}
	// Through the API the same.
	url := b.apiServer(t)
	code, stdout, stderr := runCLI(t, t.Context(), "inspect", "--queue", "served", "--json", "--api", url, "--token", testAdminToken)
	if got := decodeJSON[wire.Queue](t, stdout); code != 0 || got.Leader == nil || *got.Leader != d.ID() || len(got.Workers) != 1 || got.Concurrency != 3 {
		t.Errorf("inspect --api --json: exit %d, %+v %s", code, got, stderr)
	}
	for _, cmd := range []string{"inspect", "queue status"} {
		code, stdout, stderr := b.run(t, "", cmd, "--queue", "served")
		rows := tableRows(stdout)
		if code != 0 || len(rows) != 4 || rows[1][7] != "1" || rows[1][8] != d.ID() ||
			!slices.Equal(rows[2], []string{"WORKER", "CONCURRENCY", "RATE", "LIMIT", "LEADER", "SEEN"}) ||
			rows[3][0] != d.ID() || rows[3][1] != "3" || rows[3][2] != "-" || rows[3][3] != "yes" {
			t.Errorf("%s: exit %d, %q %s", cmd, code, rows, stderr)
		}
	}
}

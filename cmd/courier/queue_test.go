package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// TestQueuePause: pause, status, resume and status again, directly on
// Redis and through the API, each on a queue of its own.
func TestQueuePause(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	modes := map[string]func(t *testing.T, cmd string, flags ...string) (int, string, string){
		"redis": func(t *testing.T, cmd string, flags ...string) (int, string, string) {
			t.Helper()
			return b.run(t, "", cmd, flags...)
		},
		"api": func(t *testing.T, cmd string, flags ...string) (int, string, string) {
			t.Helper()
			args := append(strings.Fields(cmd), "--api", url, "--token", testAdminToken)
			return runCLIStdin(t, t.Context(), "", append(args, flags...)...)
		},
	}
	header := []string{"QUEUE", "STATE", "SCHEDULED", "READY", "ACTIVE", "DEAD", "COMPLETED", "WORKERS", "LEADER"}
	for mode, run := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			q := "q-" + mode
			b.enqueue(t, worker.JobSpec{Queue: q, ID: "now"}, worker.JobSpec{Queue: q, ID: "later", Delay: time.Hour})
			status := func(want string) {
				t.Helper()
				code, out, errOut := run(t, "queue status", "--queue", q)
				rows := [][]string{header, {q, want, "1", "1", "0", "0", "0", "0", "-"}}
				if got := tableRows(out); code != 0 || errOut != "" || !slices.EqualFunc(got, rows, slices.Equal) {
					t.Errorf("status: exit %d, table %q, stderr %q; want %q", code, got, errOut, rows)
				}
				code, out, errOut = run(t, "queue status", "--queue", q, "--json")
				got := decodeJSON[wire.Queue](t, out)
				if code != 0 || errOut != "" || got.Name != q || got.Paused != (want == "paused") ||
					got.Jobs != (wire.Counts{Scheduled: 1, Ready: 1}) || got.Leader != nil || got.Workers == nil {
					t.Errorf("status --json: exit %d, %s %q; want queue %s %s with 1 scheduled and 1 ready job", code, out, errOut, q, want)
				}
			}
			change := func(action, stdout string, paused bool) {
				t.Helper()
				// Twice: the second changes nothing and says the same.
				for range 2 {
					code, out, errOut := run(t, "queue "+action, "--queue", q)
					if code != 0 || out != stdout || errOut != "" {
						t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0, %q", action, code, out, errOut, stdout)
					}
				}
				if s := b.stats(t, q); s.Paused != paused || s.Ready != 1 {
					t.Errorf("after %s: %+v", action, s)
				}
			}
			status("running")
			change("pause", "paused queue "+q+"\n", true)
			status("paused")
			change("resume", "resumed queue "+q+"\n", false)
			status("running")

			for action, paused := range map[string]bool{"pause": true, "resume": false} {
				code, out, errOut := run(t, "queue "+action, "--queue", q, "--json")
				if got := decodeJSON[wire.Queue](t, out); code != 0 || errOut != "" || got.Name != q || got.Paused != paused || got.Jobs.Ready != 1 {
					t.Errorf("%s --json: exit %d, %s %q", action, code, out, errOut)
				}
			}
		})
	}
}

func TestQueueUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cmd      string
		flags    []string
		code     int
		inStderr string
	}{
		{"no action", "queue", []string{"--queue", "q"}, 2, "name an action: pause, resume, status, wait or forget"},
		{"unknown action", "queue stop", []string{"--queue", "q"}, 2, `unknown action "stop"`},
		{"action help", "queue pause", []string{"-h"}, 0, "--queue"},
		{"pause without queue", "queue pause", nil, 2, "--queue is required"},
		{"resume without queue", "queue resume", nil, 2, "--queue is required"},
		{"status without queue", "queue status", nil, 2, "--queue is required"},
		{"bad queue", "queue pause", []string{"--queue", "a{b}"}, 2, `invalid --queue: name "a{b}" has '{'`},
		{"bad queue through the API", "queue pause", []string{"--queue", "a b", "--api", "http://127.0.0.1:1"}, 2, "invalid --queue"},
		{"unknown flag", "queue status", []string{"--queue", "q", "--job", "x"}, 2, "flag provided but not defined: --job"},
		{"stray argument", "queue pause", []string{"--queue", "q", "now"}, 2, `unexpected argument "now"`},
	}
	bare := []bareCase{
		{"nothing", []string{"queue"}, 2, "name an action: pause, resume, status, wait or forget"},
		{"help", []string{"queue", "-h"}, 0, "Usage: courier queue pause|resume|status"},
		{"flags before the action", []string{"queue", "--queue", "q", "pause"}, 2, "name an action"},
	}
	checkBare(t, bare)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			code, stdout, stderr := b.run(t, "", tt.cmd, tt.flags...)
			checkOutput(t, code, stdout, stderr, tt.code, tt.inStderr)
			if s := b.stats(t, "q"); s.Paused {
				t.Error("a refused command paused queue q")
			}
		})
	}
}

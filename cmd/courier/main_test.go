package main

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func runCLI(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut testkit.Buffer
	code = run(ctx, args, streams{in: strings.NewReader(""), out: &out, err: &errOut})
	return code, out.String(), errOut.String()
}

func TestUsage(t *testing.T) {
	t.Parallel()
	checkBare(t, []bareCase{
		{"no command", nil, 2, "Usage: courier"},
		{"help", []string{"help"}, 0, "bench"},
		{"-h", []string{"-h"}, 0, "Exit codes:"},
		{"--help", []string{"--help"}, 0, "Run 'courier help <command>'"},
		{"help for a command", []string{"help", "enqueue"}, 0, "Usage: courier enqueue --queue Q"},
		{"help for an action", []string{"help", "queue", "pause"}, 0, "Usage: courier queue pause --queue Q"},
		{"help for bench", []string{"help", "bench"}, 0, "-concurrency"},
		{"help for nothing known", []string{"help", "frobnicate"}, 2, `no help for "frobnicate"`},
		{"help for an unknown action", []string{"help", "dead", "list", "extra"}, 2, `no help for "dead list extra"`},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown command near two", []string{"de"}, 2, `Did you mean "dead" or "dev"?`},
		{"misspelt command", []string{"inspct"}, 2, `courier: unknown command "inspct"` + "\nDid you mean \"inspect\"?\nRun 'courier help' for usage.\n"},
		{"unknown flag", []string{"bench", "--nope"}, 2, "flag provided but not defined"},
		{"bad mode", []string{"bench", "--mode", "fast"}, 2, `--mode "fast"`},
		{"bad n", []string{"bench", "--n", "-1"}, 2, "--n must be at least 1"},
		{"stray argument", []string{"version", "extra"}, 2, `unexpected argument "extra"`},
		{"flag help", []string{"bench", "-h"}, 0, "-concurrency"},
		{"command help", []string{"enqueue", "--help"}, 0, "--unique-key"},
		{"bad flag value", []string{"enqueue", "--delay", "soon"}, 2, `invalid value "soon" for flag --delay`},
	})
}

// TestUsageErrorIsOneLine: a usage error is the problem on one line and
// the hint to the command's help, nothing more.
func TestUsageErrorIsOneLine(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, t.Context(), "enqueue", "--payload", "x")
	want := "courier enqueue: --queue is required\nRun 'courier help enqueue' for usage.\n"
	if code != exitUsage || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, want)
	}
	code, _, stderr = runCLI(t, t.Context(), "dead", "list", "--queue", "q", "--limit", "0")
	want = "courier dead list: --limit must be 1 to 1000 (got 0)\nRun 'courier help dead list' for usage.\n"
	if code != exitUsage || stderr != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
	code, _, stderr = runCLI(t, t.Context(), "bench", "--nope")
	if code != exitUsage || len(lines(stderr)) != 2 || strings.Contains(stderr, "Usage:") {
		t.Errorf("bench: exit %d, stderr %q; want 2, the problem and the hint", code, stderr)
	}
}

// TestBenchCannotReachRedis: a bench that cannot reach Redis exits 5 with
// the error after "courier bench: ". The modes are tested in
// cmd/internal/bench.
func TestBenchCannotReachRedis(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, t.Context(), "bench", "--redis", "127.0.0.1:1", "--n", "1")
	if code != exitUnavailable || !strings.Contains(stderr, "courier bench: connect to Redis at 127.0.0.1:1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

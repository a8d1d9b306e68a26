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
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"no command", nil, 2, "Usage: courier"},
		{"help", []string{"help"}, 0, "bench"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown flag", []string{"bench", "--nope"}, 2, "flag provided but not defined"},
		{"bad mode", []string{"bench", "--mode", "fast"}, 2, `--mode "fast"`},
		{"bad n", []string{"bench", "--n", "-1"}, 2, "--n must be at least 1"},
		{"stray argument", []string{"version", "extra"}, 2, `unexpected argument "extra"`},
		{"flag help", []string{"bench", "-h"}, 0, "-concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, t.Context(), tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.inStderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runCLI(t, t.Context(), "version")
	if code != 0 || !strings.HasPrefix(stdout, "courier dev go1.") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// TestBenchCannotReachRedis: a bench that fails (not a usage error) exits 1
// with the error after "courier bench: ". The modes are tested in
// internal/bench.
func TestBenchCannotReachRedis(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, t.Context(), "bench", "--redis", "127.0.0.1:1", "--n", "1")
	if code != 1 || !strings.Contains(stderr, "connect to Redis at 127.0.0.1:1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

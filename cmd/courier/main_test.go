package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runCLI(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut syncBuffer
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

// parseFigures parses one line of key=value pairs.
func parseFigures(t *testing.T, line string) map[string]string {
	t.Helper()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("want exactly one line, got %q", line)
	}
	kv := make(map[string]string)
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("field %q is not key=value in %q", f, line)
		}
		kv[k] = v
	}
	return kv
}

func number(t *testing.T, kv map[string]string, key string) float64 {
	t.Helper()
	v, ok := kv[key]
	if !ok {
		t.Fatalf("no %s in %v", key, kv)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s=%q is not a number", key, v)
	}
	return f
}

// TestBench runs every mode against a real Redis, small, and checks the
// figures are all there and that the bench leaves no keys behind. The
// figures' values are not asserted (the machines are shared), except the
// guarantee that delayed jobs never start early.
func TestBench(t *testing.T) {
	t.Parallel()
	addr := testkit.SingleAddr(t)
	rdb := testkit.Single(t)
	modes := []struct {
		args []string
		keys []string
	}{
		{[]string{"--mode", "throughput", "--n", "3000", "--backlog", "500"},
			[]string{"n", "concurrency", "enqueue_per_s", "process_per_s", "end_to_end_per_s", "redis_calls_per_job", "redis_cpu_us_per_job", "redis_bytes_per_job", "backlog"}},
		{[]string{"--mode", "latency", "--n", "20", "--every", "5ms"},
			[]string{"got", "lag_p50_ms", "lag_p99_ms", "lag_max_ms"}},
		{[]string{"--mode", "delayed", "--n", "50", "--delay", "700ms"},
			[]string{"got", "lag_min_ms", "lag_p50_ms", "lag_p99_ms", "lag_max_ms"}},
		{[]string{"--mode", "idle", "--duration", "2s"},
			[]string{"redis_cmds", "redis_cmds_per_s"}},
	}
	for _, m := range modes {
		// Sequential: the key check below must see only this run's keys.
		code, stdout, stderr := runCLI(t, t.Context(), append([]string{"bench", "--redis", addr}, m.args...)...)
		if code != 0 {
			t.Fatalf("bench %v: exit %d, stderr %s", m.args, code, stderr)
		}
		kv := parseFigures(t, stdout)
		if kv["mode"] != m.args[1] {
			t.Errorf("mode=%q, want %q", kv["mode"], m.args[1])
		}
		for _, k := range m.keys {
			number(t, kv, k)
		}
		if m.args[1] == "delayed" {
			if got := number(t, kv, "lag_min_ms"); got < 0 {
				t.Errorf("a delayed job started %.2f ms early", -got)
			}
		}
		if _, ok := kv["got"]; ok && number(t, kv, "got") != number(t, kv, "n") {
			t.Errorf("got=%s of n=%s", kv["got"], kv["n"])
		}
		keys, err := rdb.Do(t.Context(), rdb.B().Keys().Pattern("courier-bench-*").Build()).AsStrSlice()
		if err != nil || len(keys) > 0 {
			t.Errorf("bench %v left keys %v (err %v)", m.args, keys, err)
		}
	}
}

func TestBenchCannotReachRedis(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, t.Context(), "bench", "--redis", "127.0.0.1:1", "--n", "1")
	if code != 1 || !strings.Contains(stderr, "connect to Redis at 127.0.0.1:1") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestScriptInternalCommands keeps the bench's list of commands that scripts
// run inside Redis in step with the scripts, so redis_calls_per_job counts
// only what clients send.
func TestScriptInternalCommands(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`redis\.call\('([A-Z]+)'`)
	files, err := filepath.Glob("../../lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("the scripts: %v %v", files, err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if cmd := strings.ToLower(m[1]); !scriptInternal[cmd] {
				t.Errorf("scripts call %s, which scriptInternal does not list", cmd)
			}
		}
	}
}

package bench

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantErr  error
		inStderr string
	}{
		{"unknown flag", []string{"--nope"}, ErrUsage, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, ErrUsage, `unexpected argument "extra"`},
		{"bad mode", []string{"--mode", "fast"}, ErrUsage, `--mode "fast": want throughput, latency, delayed, idle or api`},
		{"bad n", []string{"--n", "-1"}, ErrUsage, "--n must be at least 1"},
		{"bad batch", []string{"--mode", "api", "--batch", "1001"}, ErrUsage, "--batch must be 1 to 1000"},
		{"bad concurrency", []string{"--concurrency", "0"}, ErrUsage, "--concurrency must be at least 1"},
		{"negative delay", []string{"--delay", "-1s"}, ErrUsage, "--delay, --payload and --backlog not negative"},
		{"help", []string{"-h"}, flag.ErrHelp, "-concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			_, err := parseOptions(tt.args, &stderr)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(stderr.String(), tt.inStderr) ||
				!strings.Contains(stderr.String(), "Usage: courier bench --redis ADDR") {
				t.Errorf("err %v, stderr %q; want %v, %q and the usage", err, stderr.String(), tt.wantErr, tt.inStderr)
			}
		})
	}
}

// TestParseOptionsDefaultN: --n defaults by mode; idle needs none.
func TestParseOptionsDefaultN(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]int{"throughput": 200000, "latency": 500, "delayed": 1000, "idle": 0, "api": 50000} {
		var stderr bytes.Buffer
		o, err := parseOptions([]string{"--mode", mode}, &stderr)
		if err != nil || o.n != want {
			t.Errorf("--mode %s: n=%d, err %v (%s); want n=%d", mode, o.n, err, stderr.String(), want)
		}
	}
}

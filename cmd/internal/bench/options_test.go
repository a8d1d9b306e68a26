package bench

import (
	"bytes"
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
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
		{"bad mode", []string{"--mode", "fast"}, ErrUsage, `--mode "fast": want throughput, latency, delayed, idle, api, pause, priority, cancel, keys, authflood or conns`},
		{"bad n", []string{"--n", "-1"}, ErrUsage, "--n must be at least 1"},
		{"bad batch", []string{"--mode", "api", "--batch", "1001"}, ErrUsage, "--batch must be 1 to 1000"},
		{"bad concurrency", []string{"--concurrency", "0"}, ErrUsage, "--concurrency must be at least 1"},
		{"negative delay", []string{"--delay", "-1s"}, ErrUsage, "--delay, --payload, --backlog and --work not negative"},
		{"negative work", []string{"--mode", "pause", "--work", "-1ms"}, ErrUsage, "--backlog and --work not negative"},
		{"negative duration", []string{"--mode", "idle", "--duration", "-1s"}, ErrUsage, "--every, --duration and --timeout must be positive"},
		{"authflood without --api", []string{"--mode", "authflood", "--token", "t"}, ErrUsage, "--mode authflood needs --api URL and --token T"},
		{"conns without --token", []string{"--mode", "conns", "--api", "http://127.0.0.1:8080"}, ErrUsage, "--mode conns needs --api URL and --token T"},
		{"--api not HTTP", []string{"--mode", "conns", "--api", "ftp://127.0.0.1", "--token", "t"}, ErrUsage, `--api "ftp://127.0.0.1": want http://host:port`},
		{"--api without a host", []string{"--mode", "authflood", "--api", "http://:8080", "--token", "t"}, ErrUsage, "want http://host:port"},
		{"negative clients", []string{"--mode", "authflood", "--api", "http://127.0.0.1:1", "--token", "t", "--clients", "-1"}, ErrUsage, "--clients at least 1"},
		{"--cluster and --redis", []string{"--redis", "127.0.0.1:6379", "--cluster", "127.0.0.1:7000"}, ErrUsage, "--redis and --cluster exclude each other"},
		{"--cluster not host:port", []string{"--cluster", "127.0.0.1:7000,nohost"}, ErrUsage, `--cluster "127.0.0.1:7000,nohost": want host:port,host:port`},
		{"--cluster empty address", []string{"--cluster", "127.0.0.1:7000,"}, ErrUsage, "want host:port,host:port"},
		{"no partitions", []string{"--partitions", "0"}, ErrUsage, "--partitions must be 1 to 64 (got 0)"},
		{"too many partitions", []string{"--partitions", "65"}, ErrUsage, "--partitions must be 1 to 64 (got 65)"},
		{"--cluster against an API", []string{"--mode", "conns", "--api", "http://127.0.0.1:8080", "--token", "t", "--cluster", "127.0.0.1:7000"}, ErrUsage,
			"--cluster and --partitions measure Redis: --mode conns measures a daemon's API"},
		{"--trace outside throughput", []string{"--mode", "latency", "--trace"}, ErrUsage,
			"--trace, --retain and --progress are for --mode throughput (got --mode latency)"},
		{"--retain outside throughput", []string{"--mode", "idle", "--retain", "5"}, ErrUsage, "are for --mode throughput (got --mode idle)"},
		{"--progress outside throughput", []string{"--mode", "api", "--progress"}, ErrUsage, "are for --mode throughput (got --mode api)"},
		{"negative retain", []string{"--retain", "-1"}, ErrUsage, "--retain must be 0 to 10000000 (got -1)"},
		{"too large retain", []string{"--retain", "10000001"}, ErrUsage, "--retain must be 0 to 10000000 (got 10000001)"},
		{"keys flags outside keys", []string{"--mode", "throughput", "--key-cap", "2"}, ErrUsage,
			"--phases, --keys, --per-key, --key-cap, --ratio-n, --share-keys, --share-jobs, --weights are for --mode keys (got --mode throughput)"},
		{"bad weights", []string{"--mode", "keys", "--weights", "1,0"}, ErrUsage, `--weights "1,0": want weights of 1 to 1000, comma-separated`},
		{"weights not numbers", []string{"--mode", "keys", "--weights", "a"}, ErrUsage, `--weights "a": want weights`},
		{"bad phases", []string{"--mode", "keys", "--phases", "ratio,fast"}, ErrUsage, `--phases "ratio,fast": want some of ratio, share, tenants, comma-separated`},
		{"ratio-n below twice keys", []string{"--mode", "keys", "--keys", "10", "--ratio-n", "19"}, ErrUsage, "--ratio-n must be at least twice --keys (10) (got 19)"},
		{"no key cap", []string{"--mode", "keys", "--key-cap", "0"}, ErrUsage, "--key-cap must be 1 to 1000000 (got 0)"},
		{"no share keys", []string{"--mode", "keys", "--share-keys", "0"}, ErrUsage, "--keys, --per-key, --share-keys and --share-jobs must be at least 1"},
		{"help", []string{"-h"}, flag.ErrHelp, "--concurrency"},
		{"help of --key-cap", []string{"-h"}, flag.ErrHelp, "--key-cap int"},
		{"help of --trace", []string{"-h"}, flag.ErrHelp, "--trace\n"},
		{"help of --retain", []string{"-h"}, flag.ErrHelp, "--retain int"},
		{"help of --progress", []string{"-h"}, flag.ErrHelp, "--progress\n"},
		{"help of --cluster", []string{"-h"}, flag.ErrHelp, "--cluster addresses"},
		{"help of --partitions", []string{"-h"}, flag.ErrHelp, "--partitions int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var help bytes.Buffer
			_, err := parseOptions(tt.args, &help)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v; want %v", err, tt.wantErr)
			}
			if errors.Is(tt.wantErr, flag.ErrHelp) {
				if !strings.Contains(help.String(), "Usage: courier bench --redis ADDR") || !strings.Contains(help.String(), tt.inStderr) {
					t.Errorf("help %q; want the usage and %q", help.String(), tt.inStderr)
				}
				return
			}
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(ue.Msg, tt.inStderr) || strings.Contains(ue.Msg, "\n") || help.Len() != 0 {
				t.Errorf("err %v, printed %q; want one line holding %q and nothing printed", err, help.String(), tt.inStderr)
			}
		})
	}
}

// TestParseOptionsDefaults: --n, --clients and --duration default by mode;
// idle needs no --n, and the modes against an API need no --redis.
func TestParseOptionsDefaults(t *testing.T) {
	t.Parallel()
	api := []string{"--api", "http://127.0.0.1:8080", "--token", "t"}
	tests := []struct {
		mode     string
		args     []string
		n        int
		clients  int
		duration time.Duration
	}{
		{"throughput", nil, 200000, 1, 0},
		{"latency", nil, 500, 1, 0},
		{"delayed", nil, 1000, 1, 0},
		{"idle", nil, 0, 1, 10 * time.Second},
		{"api", nil, 50000, 8, 0},
		{"authflood", api, 100000, 64, 5 * time.Second},
		{"conns", api, 20000, 1, 5 * time.Second},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		o, err := parseOptions(append([]string{"--mode", tt.mode}, tt.args...), &stderr)
		if err != nil || o.n != tt.n || o.clients != tt.clients || o.duration != tt.duration {
			t.Errorf("--mode %s: n=%d clients=%d duration=%s, err %v (%s); want %d, %d, %s",
				tt.mode, o.n, o.clients, o.duration, err, stderr.String(), tt.n, tt.clients, tt.duration)
		}
	}
}

// TestParseOptionsCluster: --cluster gives the seed addresses instead of
// --redis's, and --partitions defaults to 1.
func TestParseOptionsCluster(t *testing.T) {
	t.Parallel()
	var help bytes.Buffer
	o, err := parseOptions(nil, &help)
	if err != nil || o.partitions != 1 || !slices.Equal(o.redisAddrs(), []string{"127.0.0.1:6379"}) {
		t.Errorf("no flags: partitions %d, addresses %v, err %v; want 1, [127.0.0.1:6379]", o.partitions, o.redisAddrs(), err)
	}
	o, err = parseOptions([]string{"--cluster", "127.0.0.1:7101, 127.0.0.1:7102,[::1]:7103", "--partitions", "12"}, &help)
	want := []string{"127.0.0.1:7101", "127.0.0.1:7102", "[::1]:7103"}
	if err != nil || o.partitions != 12 || !slices.Equal(o.redisAddrs(), want) {
		t.Errorf("--cluster: partitions %d, addresses %v, err %v; want 12, %v", o.partitions, o.redisAddrs(), err, want)
	}
}

// TestParseOptionsThroughputSwitches: --trace, --retain and --progress are
// off by default and set by their flags.
func TestParseOptionsThroughputSwitches(t *testing.T) {
	t.Parallel()
	var help bytes.Buffer
	o, err := parseOptions(nil, &help)
	if err != nil || o.trace || o.retain != 0 || o.progress {
		t.Errorf("no flags: trace %t, retain %d, progress %t, err %v; want all off", o.trace, o.retain, o.progress, err)
	}
	o, err = parseOptions([]string{"--trace", "--retain", "100", "--progress"}, &help)
	if err != nil || !o.trace || o.retain != 100 || !o.progress {
		t.Errorf("--trace --retain 100 --progress: trace %t, retain %d, progress %t, err %v", o.trace, o.retain, o.progress, err)
	}
}

// TestParseOptionsKeys: the keys mode's defaults (a million jobs of one
// key, 10,000 active keys, 500 probes 5 ms apart, every phase), and
// --every given keeps its value.
func TestParseOptionsKeys(t *testing.T) {
	t.Parallel()
	var help bytes.Buffer
	o, err := parseOptions([]string{"--mode", "keys"}, &help)
	if err != nil {
		t.Fatal(err)
	}
	phases, _ := o.keys.phaseList()
	weights, _ := o.keys.weightList()
	if o.n != 500 || o.every != 5*time.Millisecond || o.backlog != 1000000 || o.work != time.Millisecond ||
		o.keys.active != 10000 || o.keys.capPerKey != 4 || !slices.Equal(phases, keysPhases) || !slices.Equal(weights, []int{1, 2, 4}) {
		t.Errorf("--mode keys: %+v; want n 500, every 5ms, backlog 1000000, work 1ms, 10000 keys, cap 4, every phase, weights 1,2,4", o)
	}
	o, err = parseOptions([]string{"--mode", "keys", "--every", "20ms", "--phases", "tenants, ratio"}, &help)
	phases, _ = o.keys.phaseList()
	if err != nil || o.every != 20*time.Millisecond || !slices.Equal(phases, []string{"ratio", "tenants"}) {
		t.Errorf("--every 20ms --phases tenants,ratio: every %s, phases %v, err %v; want 20ms, [ratio tenants] (in the order they run)", o.every, phases, err)
	}
}

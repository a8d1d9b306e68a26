package bench

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// run runs the bench with args and returns its one line of output.
func run(t *testing.T, args ...string) string {
	t.Helper()
	var stdout bytes.Buffer
	if err := Run(t.Context(), args, &stdout, t.Output()); err != nil {
		t.Fatalf("bench %v: %v", args, err)
	}
	return stdout.String()
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

// noKeysLeft fails the test if any bench key exists after the run with args.
func noKeysLeft(t *testing.T, rdb rueidis.Client, args []string) {
	t.Helper()
	keys, err := rdb.Do(t.Context(), rdb.B().Keys().Pattern("courier-bench-*").Build()).AsStrSlice()
	if err != nil || len(keys) > 0 {
		t.Errorf("bench %v left keys %v (err %v)", args, keys, err)
	}
}

// TestRun runs every mode but api against a real Redis, small, and checks
// the figures are all there and that the bench leaves no keys behind. The
// figures' values are not asserted (the machines are shared), except the
// guarantee that delayed jobs never start early.
func TestRun(t *testing.T) {
	t.Parallel()
	addr := testkit.SingleAddr(t)
	rdb := testkit.Single(t)
	modes := []struct {
		args []string
		keys []string
	}{
		{[]string{"--mode", "throughput", "--n", "3000", "--backlog", "500"},
			[]string{"n", "concurrency", "enqueue_per_s", "process_per_s", "end_to_end_per_s", "redis_calls_per_job", "redis_cpu_us_per_job", "redis_bytes_per_job", "backlog"}},
		{[]string{"--mode", "throughput", "--n", "1000", "--trace", "--retain", "100", "--progress"},
			[]string{"redis_calls_per_job", "retain", "completed", "spans_ended", "spans_exported", "otlp_requests", "otlp_bytes_per_job", "trace_flush_ms"}},
		{[]string{"--mode", "latency", "--n", "20", "--every", "5ms"},
			[]string{"got", "lag_p50_ms", "lag_p99_ms", "lag_max_ms"}},
		{[]string{"--mode", "delayed", "--n", "50", "--delay", "700ms"},
			[]string{"got", "lag_min_ms", "lag_p50_ms", "lag_p99_ms", "lag_max_ms"}},
		{[]string{"--mode", "idle", "--duration", "2s"},
			[]string{"redis_cmds", "redis_cmds_per_s"}},
	}
	for _, m := range modes {
		// Sequential: the key check below must see only this run's keys.
		kv := parseFigures(t, run(t, append([]string{"--redis", addr}, m.args...)...))
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
		if kv["trace"] == "true" && (kv["spans_exported"] != kv["spans_ended"] || kv["otlp_bad_requests"] != "0" || kv["progress"] != "true") {
			// 1000 jobs' spans fit the SDK's queue: none is dropped.
			t.Errorf("--trace --progress: %v; want every span ended exported, no bad request, progress=true", kv)
		}
		if _, ok := kv["retain"]; ok && number(t, kv, "completed") < 1 {
			t.Errorf("--retain 100: completed=%s; want jobs kept", kv["completed"])
		}
		if _, ok := kv["got"]; ok && number(t, kv, "got") != number(t, kv, "n") {
			t.Errorf("got=%s of n=%s", kv["got"], kv["n"])
		}
		noKeysLeft(t, rdb, m.args)
	}
}

// TestRunAPI runs --mode api small: the figures are all there, every job
// went in with one Redis command per request, and no key is left behind.
// Not parallel: TestRun checks that no bench keys exist between its runs,
// and this bench's keys would be seen.
func TestRunAPI(t *testing.T) {
	addr := testkit.SingleAddr(t)
	rdb := testkit.Single(t)
	kv := parseFigures(t, run(t, "--redis", addr, "--mode", "api", "--n", "2500", "--batch", "100", "--clients", "4"))
	for _, k := range []string{"n", "batch", "clients", "requests", "requests_per_s", "jobs_per_s", "latency_p50_ms", "latency_p99_ms", "latency_max_ms"} {
		number(t, kv, k)
	}
	if kv["mode"] != "api" || kv["requests"] != "25" || kv["redis_cmds_per_request"] != "1.00" {
		t.Errorf("figures %v", kv)
	}
	noKeysLeft(t, rdb, []string{"--mode", "api"})
}

// keysTiny are the flags of a keys run small enough for a test: every
// phase, on a few keys, the tenants slowed by few slots and 2 ms handlers
// so that the active keys keep jobs until the last probe.
var keysTiny = []string{"--mode", "keys", "--keys", "20", "--per-key", "1000", "--backlog", "2000", "--ratio-n", "400",
	"--share-keys", "6", "--share-jobs", "50", "--n", "20", "--every", "2ms", "--concurrency", "4", "--work", "2ms"}

// keysTargets are the figures the keys mode has targets for: each is
// printed, as a number.
var keysTargets = []string{"tenant_p99_ms", "share_dev_pct", "share_dev_weighted_pct", "cap_violations", "leaked_slots", "throughput_ratio", "bytes_per_key"}

// TestRunKeys runs --mode keys small against a real Redis: the figures are
// all there, no start found its key's cap used, no slot is held once the
// fleet has stopped, the whale ran at its cap, and no key is left behind.
// Timings are not asserted. Not parallel, as TestRunAPI.
func TestRunKeys(t *testing.T) {
	addr := testkit.SingleAddr(t)
	rdb := testkit.Single(t)
	kv := parseFigures(t, run(t, append([]string{"--redis", addr}, keysTiny...)...))
	for _, k := range append(keysTargets, "tenant_p50_ms", "tenant_max_ms", "unkeyed_process_per_s", "keyed_process_per_s",
		"bytes_per_job", "bytes_per_keyed_job", "share_window", "share_weighted_window", "whale_peak", "whale_started", "keys_active_at_end") {
		number(t, kv, k)
	}
	if kv["mode"] != "keys" || kv["cap_violations"] != "0" || kv["leaked_slots"] != "0" || kv["whale_peak"] != "4" || kv["phases"] != "ratio,share,tenants" {
		t.Errorf("figures %v; want mode=keys, cap_violations=0, leaked_slots=0, whale_peak=4 (the cap), every phase", kv)
	}
	noKeysLeft(t, rdb, keysTiny)

	// One phase alone prints its own figures only.
	kv = parseFigures(t, run(t, "--redis", addr, "--mode", "keys", "--phases", "share", "--share-keys", "4", "--share-jobs", "20"))
	if _, ok := kv["tenant_p99_ms"]; ok || kv["phases"] != "share" {
		t.Errorf("--phases share: %v; want the share figures only", kv)
	}
	number(t, kv, "share_dev_weighted_pct")
	noKeysLeft(t, rdb, []string{"--phases", "share"})
}

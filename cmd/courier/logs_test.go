package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/internal/testkit"
)

// jsonRecords parses every line of out as a JSON object, failing t for a
// line that is not one.
func jsonRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	var records []map[string]any
	for _, l := range lines(out) {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Errorf("a line of stderr is not JSON (%v): %s", err, l)
			continue
		}
		records = append(records, r)
	}
	return records
}

// checkSeconds fails t for a record with a duration that is not in
// seconds: a key of a duration the daemon logs without its _seconds
// suffix, a _seconds value that is not a number, or a number of
// nanoseconds of the default lease or shutdown timeout.
func checkSeconds(t *testing.T, out string, records []map[string]any) {
	t.Helper()
	for _, r := range records {
		for k, v := range r {
			if _, isNumber := v.(float64); strings.HasSuffix(k, "_seconds") && !isNumber {
				t.Errorf("%s is %v, not a number: %v", k, v, r)
			}
			if k == "lease" || k == "shutdown_timeout" || k == "retry_in" {
				t.Errorf("duration %s without its unit: %v", k, r)
			}
		}
	}
	for _, ns := range []string{"30000000000", "25000000000", "5000000000"} {
		if strings.Contains(out, ns) {
			t.Errorf("a duration in nanoseconds (%s) in the logs:\n%s", ns, out)
		}
	}
}

// find returns the first record whose msg contains sub.
func find(records []map[string]any, sub string) map[string]any {
	for _, r := range records {
		if msg, _ := r["msg"].(string); strings.Contains(msg, sub) {
			return r
		}
	}
	return nil
}

// TestJSONLogs: with --log-format json every line courier run and courier
// dev print on stderr is JSON, the notice of a signal and the dev banner
// included, and durations are seconds under keys ending in _seconds.
func TestJSONLogs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Run("run", func(t *testing.T) {
		t.Parallel()
		cfg := writeConfig(t, logConfig(testkit.SingleAddr(t), testkit.Prefix(t), "127.0.0.1:0"))
		daemon := startCourier(t, nil, "run", "--config", cfg, "--log-format", "json")
		daemon.waitOutput(regexp.MustCompile(`"msg":"worker pool started"`), 20*time.Second)
		daemon.signal(syscall.SIGTERM)
		if code := daemon.wait(20 * time.Second); code != 0 {
			t.Errorf("exit %d", code)
		}
		out := daemon.stderr.String()
		records := jsonRecords(t, out)
		checkSeconds(t, out, records)
		start := find(records, "courier starting")
		if start == nil || start["lease_seconds"] != 30.0 || start["shutdown_timeout_seconds"] != 25.0 {
			t.Errorf("courier starting: %v; want lease_seconds 30 and shutdown_timeout_seconds 25", start)
		}
		if sig := find(records, "received: draining"); sig == nil || sig["signal"] != syscall.SIGTERM.String() {
			t.Errorf("no JSON record of the signal:\n%s", out)
		}
		if find(records, "drained") == nil {
			t.Errorf("no drain summary:\n%s", out)
		}
	})
	t.Run("dev", func(t *testing.T) {
		t.Parallel()
		dev := startCourier(t, nil, "dev", "--http-addr", "127.0.0.1:0", "--log-format", "json")
		dev.waitOutput(regexp.MustCompile(`"msg":"job".*hello from courier dev`), 20*time.Second)
		dev.signal(syscall.SIGTERM)
		if code := dev.wait(20 * time.Second); code != 0 {
			t.Errorf("exit %d", code)
		}
		out := dev.stderr.String()
		records := jsonRecords(t, out)
		checkSeconds(t, out, records)
		banner := find(records, "embedded store listening")
		if banner == nil || !strings.Contains(fmt.Sprint(banner["enqueue"]), "enqueue --redis "+fmt.Sprint(banner["store"])) {
			t.Errorf("the banner is not a JSON record with the enqueue command: %v", banner)
		}
		if find(records, "received: draining") == nil {
			t.Errorf("no JSON record of the signal:\n%s", out)
		}
		if dev.stdout.String() != "" {
			t.Errorf("stdout %q; want the banner on stderr alone", dev.stdout.String())
		}
	})
	t.Run("a configuration refused", func(t *testing.T) {
		t.Parallel()
		cfg := writeConfig(t, logConfig(testkit.SingleAddr(t), testkit.Prefix(t), "127.0.0.1:0")+"log: {format: json}\nshutdown: {timeout: -1s}\n")
		code, stdout, stderr := courierEnv(t, nil, nil, "run", "--config", cfg, "--log-format", "json")
		records := jsonRecords(t, stderr)
		if code != 1 || stdout != "" || len(records) != 1 || records[0]["exit_code"] != 1.0 || !strings.Contains(fmt.Sprint(records[0]["err"]), "shutdown.timeout") {
			t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one JSON record naming shutdown.timeout", code, stdout, stderr)
		}
	})
}

// TestTextLogsKeepDurations: text logs stay for people, durations as Go
// writes them; JSON logs give them in seconds, in groups too.
func TestTextLogsKeepDurations(t *testing.T) {
	t.Parallel()
	var buf testkit.Buffer
	newLogger(&buf, config.Log{Level: "info", Format: "text"}).Info("x", "lease", 1500*time.Millisecond)
	if !strings.Contains(buf.String(), "lease=1.5s") {
		t.Errorf("text log %q, want lease=1.5s", buf.String())
	}
	var jsonBuf testkit.Buffer
	log := newLogger(&jsonBuf, config.Log{Level: "info", Format: "json"})
	log.Info("x", "lease", 1500*time.Millisecond, slog.Group("g", "wait_seconds", time.Second), "n", 3)
	var r map[string]any
	if err := json.Unmarshal([]byte(jsonBuf.String()), &r); err != nil || r["lease_seconds"] != 1.5 || r["n"] != 3.0 ||
		fmt.Sprint(r["g"]) != "map[wait_seconds:1]" {
		t.Errorf("JSON log %s (%v), want lease_seconds 1.5 and g.wait_seconds 1", jsonBuf.String(), err)
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// The tests in this file run the courier binary where the process matters:
// how courier run fails to start, how it waits for Redis, and what the
// commands read from the environment.

// courierEnv runs the binary to completion, like courierCLI, with env added
// to the clean environment; it fails the test if courier runs for a minute.
func courierEnv(t *testing.T, env []string, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, courierBinary(t), args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = stdin
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("courier %v did not exit within a minute; stderr:\n%s", args, errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("courier %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

// probeClient is an HTTP client for /healthz and /readyz that keeps no idle
// connections, so that none holds the daemon's shutdown.
var probeClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// httpGet returns the status and body of GET url.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := probeClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// logConfig is a configuration with one queue "q" on the log handler.
func logConfig(redisAddr, prefix, httpAddr string) string {
	return fmt.Sprintf("redis: {addr: [%q], prefix: %s}\nhttp: {addr: %q}\nqueues: {q: {handler: log}}\n", redisAddr, prefix, httpAddr)
}

func TestRunRefusesToStart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	tests := []struct {
		name   string
		config string // "" for none
		flags  []string
		code   int
		keys   []string // each must start exactly one line of stderr, as "  key: "
		inErr  string
	}{
		{
			name:   "no queues",
			config: fmt.Sprintf("redis: {addr: [%q], prefix: %s}\nhttp: {addr: 127.0.0.1:0}\n", addr, prefix),
			code:   1, keys: []string{"queues"}, inErr: "no queue is configured",
		},
		{
			name: "several invalid values",
			config: fmt.Sprintf(`
redis: {addr: [%q], prefix: %s, db: -1}
http: {addr: 127.0.0.1:0}
log: {level: loud, format: xml}
shutdown: {timeout: -1s}
queues:
  q: {handler: nope, concurrency: -2}
`, addr, prefix),
			code: 1,
			keys: []string{"redis.db", "log.level", "log.format", "shutdown.timeout", "queues.q.handler", "queues.q.concurrency"},
		},
		{
			name: "unknown keys, wrong types and invalid values",
			config: fmt.Sprintf(`
redis: {addr: [%q], prefix: %s, dbb: 1}
http: {addr: 127.0.0.1:0}
lease: {duration: soon}
log: {level: loud}
queues:
  q: {handler: log, colour: red}
`, addr, prefix),
			code: 1,
			keys: []string{"redis.dbb", "lease.duration", "log.level", "queues.q.colour"},
		},
		{
			name:   "invalid flag value",
			config: logConfig(addr, prefix, "127.0.0.1:0"),
			flags:  []string{"--log-level", "loud", "--redis", "nohost"},
			code:   1, keys: []string{"log.level", "redis.addr[0]"},
		},
		{
			name:  "missing config file",
			flags: []string{"--config", "/nonexistent/courier.yaml"},
			code:  1, inErr: "/nonexistent/courier.yaml",
		},
		{
			name:   "unknown flag",
			config: logConfig(addr, prefix, "127.0.0.1:0"),
			flags:  []string{"--queues", "q"},
			code:   2, inErr: "flag provided but not defined: --queues",
		},
		{
			name:   "stray argument",
			config: logConfig(addr, prefix, "127.0.0.1:0"),
			flags:  []string{"now"},
			code:   2, inErr: `unexpected argument "now"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"run"}
			if tt.config != "" {
				args = append(args, "--config", writeConfig(t, tt.config))
			}
			code, stdout, stderr := courierEnv(t, nil, nil, append(args, tt.flags...)...)
			if code != tt.code || stdout != "" || !strings.Contains(stderr, tt.inErr) {
				t.Errorf("exit %d, stdout %q; want %d, nothing, and %q in stderr:\n%s", code, stdout, tt.code, tt.inErr, stderr)
			}
			if strings.Contains(stderr, "courier starting") {
				t.Errorf("courier started:\n%s", stderr)
			}
			for _, key := range tt.keys {
				re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + `: \S`)
				if n := len(re.FindAllString(stderr, -1)); n != 1 {
					t.Errorf("%d lines start with %q, want 1:\n%s", n, key, stderr)
				}
			}
		})
	}
}

var (
	poolStartedRE = regexp.MustCompile(`msg="worker pool started"`)
	retryingRE    = regexp.MustCompile(`msg="waiting for Redis" redis=127\.0\.0\.1:1 step=connect attempts=1 .*connection refused`)
	// The wait's second record, 5 s after the first, counts the attempts
	// made meanwhile (100 ms doubling to 1 s: about 9).
	stillWaitingRE = regexp.MustCompile(`msg="still waiting for Redis" redis=127\.0\.0\.1:1 step=connect attempts=(\d+) `)
	waitRecordRE   = regexp.MustCompile(`waiting for Redis"`)
)

// TestRunWithoutRedis: with Redis down, courier run stays up, retrying: it
// is alive but not ready, says why, logs the wait once per 5 s rather than
// once per attempt, and SIGTERM stops it at once with exit code 0.
func TestRunWithoutRedis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	daemon := startCourier(t, nil, "run", "--config", writeConfig(t, logConfig("127.0.0.1:1", testkit.Prefix(t), "127.0.0.1:0")))
	httpAddr := daemon.waitOutput(httpAddrRE, 20*time.Second)
	daemon.waitOutput(retryingRE, 20*time.Second)
	began := time.Now()

	if code, body := httpGet(t, "http://"+httpAddr+"/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz: %d %s, want 200", code, body)
	}
	code, body := httpGet(t, "http://"+httpAddr+"/readyz")
	var ready struct{ Status, Reason string }
	if err := json.Unmarshal([]byte(body), &ready); err != nil {
		t.Fatalf("GET /readyz: %d %q is not JSON: %v", code, body, err)
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(ready.Reason, "waiting for Redis") ||
		!strings.Contains(ready.Reason, "connection refused") {
		t.Errorf("GET /readyz: %d %s, want 503 with the reason it waits (connection refused)", code, body)
	}

	attempts, err := strconv.Atoi(daemon.waitOutput(stillWaitingRE, 30*time.Second))
	if err != nil || attempts < 5 {
		t.Errorf("the second record counts %d attempts (%v), want the attempts of 5 s (about 9)", attempts, err)
	}
	select {
	case <-daemon.done:
		t.Fatalf("courier exited (%v) while Redis was down; stderr:\n%s", daemon.err, daemon.stderr.String())
	default:
	}
	start := time.Now()
	daemon.signal(syscall.SIGTERM)
	code = daemon.wait(15 * time.Second)
	took := time.Since(start)
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	if took > 2*time.Second {
		t.Errorf("took %s to exit after SIGTERM; the wait for the next attempt should end at once", took.Round(time.Millisecond))
	}
	if !strings.Contains(daemon.stderr.String(), "stopped before Redis was reached") {
		t.Errorf("no log that it stopped before Redis was reached:\n%s", daemon.stderr.String())
	}
	// One record when the wait began, then one per 5 s at most.
	records := len(waitRecordRE.FindAllString(daemon.stderr.String(), -1))
	if most := 2 + int(time.Since(began)/(5*time.Second)); records > most {
		t.Errorf("%d records of the wait in %s, want at most %d (one per 5 s, not one per attempt):\n%s",
			records, time.Since(began).Round(time.Second), most, daemon.stderr.String())
	}
}

// TestRunHTTPAddr: http.addr comes from the file, then COURIER_HTTP__ADDR,
// then --http-addr. The file names a port that is taken, so courier fails
// unless something overrides it.
func TestRunHTTPAddr(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	cfg := writeConfig(t, logConfig(addr, prefix, taken.Addr().String()))

	tests := []struct {
		name  string
		env   []string
		flags []string
		serve bool
	}{
		{"file", nil, nil, false},
		{"environment over file", []string{"COURIER_HTTP__ADDR=127.0.0.1:0"}, nil, true},
		{"flag over file", nil, []string{"--http-addr", "127.0.0.1:0"}, true},
		{"flag over environment", []string{"COURIER_HTTP__ADDR=" + taken.Addr().String()}, []string{"--http-addr", "127.0.0.1:0"}, true},
		{"flag over environment, to the taken port", []string{"COURIER_HTTP__ADDR=127.0.0.1:0"}, []string{"--http-addr", taken.Addr().String()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"run", "--config", cfg}, tt.flags...)
			if !tt.serve {
				code, _, stderr := courierEnv(t, tt.env, nil, args...)
				if want := "http.addr: listen on " + taken.Addr().String(); code != 1 || !strings.Contains(stderr, want) {
					t.Errorf("exit %d; want 1 and %q in stderr:\n%s", code, want, stderr)
				}
				return
			}
			daemon := startCourier(t, tt.env, args...)
			httpAddr := daemon.waitOutput(httpAddrRE, 20*time.Second)
			if httpAddr == taken.Addr().String() {
				t.Fatalf("listening on the file's address %s", httpAddr)
			}
			// /readyz may answer 200 a round trip before the pool has
			// started, and a SIGTERM then fails the start (see
			// TestRunStoppedDuringStart); this test is about addresses.
			daemon.waitOutput(poolStartedRE, 20*time.Second)
			testkit.Poll{Every: httpPollEvery}.EventuallyState(t, 20*time.Second, func() (bool, string) {
				code, body := httpGet(t, "http://"+httpAddr+"/readyz")
				return code == http.StatusOK, fmt.Sprintf("GET /readyz on %s: %d %s, want 200", httpAddr, code, body)
			})
			daemon.signal(syscall.SIGTERM)
			if code := daemon.wait(30 * time.Second); code != 0 {
				t.Errorf("exit code %d after SIGTERM, want 0", code)
			}
		})
	}
}

// TestPasswordNeverPrinted: a Redis password, from the environment or the
// file, appears in no output of courier run or the client commands, whether
// Redis is down, refuses the credentials or accepts them (a Redis without a
// password accepts any).
func TestPasswordNeverPrinted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	const secret = "supersecret-xyz"
	addr := testkit.SingleAddr(t)
	up := regexp.MustCompile(`waiting for Redis|worker pool started`)
	tests := []struct {
		name     string
		redis    string
		env      []string
		password bool // in the file
	}{
		{"Redis down", "127.0.0.1:1", []string{"COURIER_REDIS__PASSWORD=" + secret}, false},
		{"Redis up", addr, []string{"COURIER_REDIS__PASSWORD=" + secret}, false},
		{"credentials refused", addr, []string{"COURIER_REDIS__USERNAME=courier-test-nobody", "COURIER_REDIS__PASSWORD=" + secret}, false},
		{"password in the file", addr, []string{"COURIER_REDIS__USERNAME=courier-test-nobody"}, true},
		{"sentinel password without master", addr, []string{"COURIER_REDIS__SENTINEL__PASSWORD=" + secret}, false},
	}
	for _, tt := range tests {
		for _, format := range []string{"text", "json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				prefix := testkit.Prefix(t)
				text := logConfig(tt.redis, prefix, "127.0.0.1:0")
				if tt.password {
					text = fmt.Sprintf("redis: {addr: [%q], prefix: %s, password: %s}\nhttp: {addr: 127.0.0.1:0}\nqueues: {q: {handler: log}}\n", tt.redis, prefix, secret)
				}
				cfg := writeConfig(t, text)
				outputs := map[string]string{}

				daemon := startCourier(t, tt.env, "run", "--config", cfg, "--log-level", "debug", "--log-format", format)
				err := testkit.Poll{Every: logPollEvery, Stop: daemon.done}.Until(t, 20*time.Second, func() bool { return up.MatchString(daemon.stderr.String()) })
				exited := errors.Is(err, testkit.ErrStopped) // it refused its configuration
				if err != nil && !exited {
					t.Fatalf("courier neither retried nor started within 20s:\n%s", daemon.stderr.String())
				}
				if !exited {
					daemon.signal(syscall.SIGTERM)
				}
				t.Logf("courier run: exit %d", daemon.wait(30*time.Second))
				outputs["run stderr"], outputs["run stdout"] = daemon.stderr.String(), daemon.stdout.String()

				for _, cmd := range [][]string{
					{"enqueue", "--queue", "q", "--payload", "x"},
					{"inspect"},
					{"dead", "list", "--queue", "q"},
				} {
					code, stdout, stderr := courierEnv(t, tt.env, nil, append(cmd, "--config", cfg)...)
					outputs[cmd[0]+" stderr"], outputs[cmd[0]+" stdout"] = stderr, stdout
					t.Logf("courier %s: exit %d", cmd[0], code)
				}
				for name, out := range outputs {
					if strings.Contains(out, secret) {
						t.Errorf("%s shows the password:\n%s", name, out)
					}
				}
			})
		}
	}
}

// TestClientCommandsEnvironment: the client commands read COURIER_*
// variables over the file, and flags over both.
func TestClientCommandsEnvironment(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr := testkit.SingleAddr(t)
	tests := []struct {
		name string
		// setup returns the environment, the flags, and the prefix the job
		// must land under; others must stay empty.
		setup func(t *testing.T, p string) (env, flags []string, others []string)
	}{
		{"environment", func(_ *testing.T, p string) ([]string, []string, []string) {
			return []string{"COURIER_REDIS__ADDR=" + addr, "COURIER_REDIS__PREFIX=" + p}, nil, []string{"courier"}
		}},
		{"environment over file", func(t *testing.T, p string) ([]string, []string, []string) {
			cfg := writeConfig(t, fmt.Sprintf("redis: {addr: [127.0.0.1:1], prefix: %s-file}\n", p))
			return []string{"COURIER_REDIS__ADDR=" + addr, "COURIER_REDIS__PREFIX=" + p}, []string{"--config", cfg}, []string{p + "-file"}
		}},
		{"flag over environment", func(_ *testing.T, p string) ([]string, []string, []string) {
			return []string{"COURIER_REDIS__ADDR=127.0.0.1:1", "COURIER_REDIS__PREFIX=" + p + "-env"},
				[]string{"--redis", addr, "--prefix", p}, []string{p + "-env"}
		}},
		{"variables without a double underscore ignored", func(_ *testing.T, p string) ([]string, []string, []string) {
			return []string{"COURIER_REDIS__ADDR=" + addr, "COURIER_REDIS__PREFIX=" + p, "COURIER_PREFIX=" + p + "-single", "COURIER_TEST_REDIS_IMAGE=redis:0"},
				nil, []string{p + "-single"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prefix := testkit.Prefix(t)
			env, flags, others := tt.setup(t, prefix)
			// The id is the prefix, so that no other test's job can be
			// found under the other prefixes.
			id := prefix
			code, stdout, stderr := courierEnv(t, env, nil, append([]string{"enqueue", "--queue", "q", "--id", id, "--payload", "x"}, flags...)...)
			if code != 0 || stdout != id+"\n" {
				t.Fatalf("enqueue: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if j, err := testClient(t, prefix).Get(t.Context(), "q", id); err != nil || string(j.Payload) != "x" {
				t.Errorf("job under prefix %s: %+v, %v", prefix, j, err)
			}
			for _, p := range others {
				if _, err := testClient(t, p).Get(t.Context(), "q", id); !errors.Is(err, worker.ErrNotFound) {
					t.Errorf("prefix %s: Get returned %v, want ErrNotFound", p, err)
				}
			}
			code, stdout, stderr = courierEnv(t, env, nil, append([]string{"inspect", "--queue", "q", "--json"}, flags...)...)
			if code != 0 || !strings.Contains(stdout, `"ready": 1`) {
				t.Errorf("inspect: exit %d, stdout %q, stderr %q; want one ready job", code, stdout, stderr)
			}
		})
	}

	refused := []struct {
		name  string
		env   []string
		code  int
		inErr string
	}{
		{"bad value", []string{"COURIER_JOBS__MAX_PAYLOAD_BYTES=lots"}, exitFailure, "jobs.max_payload_bytes"},
		{"unknown key", []string{"COURIER_REDIS__ADRESS=" + addr}, exitFailure, "redis.adress"}, //nolint:misspell // the typo is the case
		{"unreachable Redis", []string{"COURIER_REDIS__ADDR=127.0.0.1:1"}, exitUnavailable, "127.0.0.1:1"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prefix := testkit.Prefix(t)
			env := append([]string{"COURIER_REDIS__PREFIX=" + prefix}, tt.env...)
			code, stdout, stderr := courierEnv(t, env, nil, "enqueue", "--queue", "q", "--payload", "x")
			if code != tt.code || stdout != "" || !strings.Contains(stderr, tt.inErr) {
				t.Errorf("exit %d, stdout %q; want %d, nothing and %q in stderr:\n%s", code, stdout, tt.code, tt.inErr, stderr)
			}
		})
	}
}

// TestEnqueueStdinOfProcess: the payload comes from whatever stdin courier
// is given when no flag sets it; only a terminal is refused (the user most
// likely forgot --payload). /dev/null is what cron, systemd and docker run
// give a command, and is an empty payload.
func TestEnqueueStdinOfProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr := testkit.SingleAddr(t)
	tests := []struct {
		name  string
		stdin io.Reader // nil is /dev/null
		want  string
	}{
		{"pipe", strings.NewReader(`{"to":"a@example.com"}` + "\n"), `{"to":"a@example.com"}` + "\n"},
		{"empty pipe", strings.NewReader(""), ""},
		{"/dev/null", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prefix := testkit.Prefix(t)
			code, stdout, stderr := courierEnv(t, nil, tt.stdin, "enqueue", "--redis", addr, "--prefix", prefix, "--queue", "q")
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			j, err := testClient(t, prefix).Get(t.Context(), "q", strings.TrimSpace(stdout))
			if err != nil {
				t.Fatal(err)
			}
			if string(j.Payload) != tt.want {
				t.Errorf("payload %q, want %q", j.Payload, tt.want)
			}
		})
	}
}

// TestRunStoppedDuringStart: a SIGTERM that arrives while courier run is
// starting (here: before it starts) is a clean stop, exit code 0, as it is
// while it waits for Redis.
func TestRunStoppedDuringStart(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, logConfig(testkit.SingleAddr(t), testkit.Prefix(t), "127.0.0.1:0"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	code, stdout, stderr := runCLI(t, ctx, "run", "--config", cfg)
	if code != 0 {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// The tests in this file start courier run while Redis cannot serve it
// (issue 29, item 12): it waits, not ready, until Redis answers, and fails
// at once only for what waiting cannot fix.

// readyWithin is how soon after Redis answers again a waiting daemon must
// be ready.
const readyWithin = 2 * time.Second

// TestRunWaitsForRedis: courier run started while its Redis is down stays
// up, answers /readyz 503 with the reason, is ready within 2 s of Redis
// answering, runs a job, and exits 0 on SIGTERM.
func TestRunWaitsForRedis(t *testing.T) {
	t.Parallel()
	redis := testkit.StartPrivate(t)
	redis.Kill() // nothing listens on its address now
	prefix := testkit.Prefix(t)
	daemon := startCourier(t, nil, "run", "--config", writeConfig(t, logConfig(redis.Addr, prefix, "127.0.0.1:0")))
	httpAddr := daemon.waitOutput(httpAddrRE, 20*time.Second)
	readyz := "http://" + httpAddr + "/readyz"

	testkit.Poll{Every: httpPollEvery, Stop: daemon.done}.EventuallyState(t, 20*time.Second, func() (bool, string) {
		code, body := httpGet(t, readyz)
		var r struct{ Reason string }
		_ = json.Unmarshal([]byte(body), &r)
		return code == http.StatusServiceUnavailable && strings.Contains(r.Reason, "waiting for Redis") &&
			strings.Contains(r.Reason, "connection refused"), fmt.Sprintf("GET /readyz: %d %s, want 503 waiting for Redis", code, body)
	})
	if code, _ := httpGet(t, "http://"+httpAddr+"/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz: %d while waiting, want 200", code)
	}
	// Not ready as long as Redis is down: 3 s, so that the attempts are
	// a second apart by the time it answers.
	notReady := func() bool { code, _ := httpGet(t, readyz); return code != http.StatusServiceUnavailable }
	if err := (testkit.Poll{Every: 10 * httpPollEvery}).Until(t, 3*time.Second, notReady); err == nil {
		t.Fatalf("/readyz stopped answering 503 while Redis was down")
	}

	redis.Restart(t) // returns once it answers PING
	back := time.Now()
	testkit.Poll{Every: httpPollEvery, Stop: daemon.done}.EventuallyState(t, 20*time.Second, func() (bool, string) {
		code, body := httpGet(t, readyz)
		return code == http.StatusOK, fmt.Sprintf("GET /readyz: %d %s, want 200", code, body)
	})
	took := time.Since(back)
	t.Logf("ready %s after Redis answered", took.Round(time.Millisecond))
	if took > readyWithin {
		t.Errorf("ready %s after Redis answered, want within %s", took.Round(time.Millisecond), readyWithin)
	}
	if !strings.Contains(daemon.stderr.String(), `msg="Redis answered"`) {
		t.Errorf("no record of the end of the wait:\n%s", daemon.stderr.String())
	}

	c, err := worker.NewClient(redis.Client(t), worker.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q", Payload: []byte("after the outage")})
	if err != nil {
		t.Fatal(err)
	}
	daemon.waitOutput(regexp.MustCompile(`msg=job queue=q id=`+regexp.QuoteMeta(id)), 20*time.Second)
	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestRunRefusedFailsFast: what waiting cannot fix ends courier run at
// once, exit code 1, with what to check: a wrong password (WRONGPASS), no
// password where one is needed (NOAUTH), a server certificate the
// configured CA did not sign.
func TestRunRefusedFailsFast(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	auth := testkit.StartPrivate(t)
	auth.MustDo(t, "CONFIG", "SET", "requirepass", "right-password")
	_, tlsAddr := testkit.StartPrivateTLS(t, testkit.NewCA(t))
	otherCA := testkit.NewCA(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, otherCA.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, redis, extra string
		inErr              []string
	}{
		{"wrong password", auth.Addr, "password: wrong-password", []string{"WRONGPASS", "redis.password"}},
		{"no password", auth.Addr, "", []string{"NOAUTH", "redis.password"}},
		{"certificate of another CA", tlsAddr, fmt.Sprintf("tls: {enabled: true, ca_file: %q}", caFile), []string{"certificate", "redis.tls"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := fmt.Sprintf("redis: {addr: [%q], prefix: %s, %s}\nhttp: {addr: 127.0.0.1:0}\nqueues: {q: {handler: log}}\n",
				tt.redis, testkit.Prefix(t), tt.extra)
			start := time.Now()
			code, _, stderr := courierEnv(t, nil, nil, "run", "--config", writeConfig(t, cfg))
			took := time.Since(start)
			if code != exitFailure {
				t.Errorf("exit %d, want %d:\n%s", code, exitFailure, stderr)
			}
			for _, s := range tt.inErr {
				if !strings.Contains(stderr, s) {
					t.Errorf("no %q in stderr:\n%s", s, stderr)
				}
			}
			if strings.Contains(stderr, "waiting for Redis") || took > 10*time.Second {
				t.Errorf("waited (%s) instead of failing at once:\n%s", took.Round(time.Millisecond), stderr)
			}
		})
	}
}

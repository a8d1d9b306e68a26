package main

import (
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var storeAddrRE = regexp.MustCompile(`embedded store listening on (127\.0\.0\.1:\d+)`)

// TestDev: courier dev starts with nothing but itself, runs its demo jobs,
// runs a job enqueued with the command it prints, serves its probes, and
// exits 0 on SIGTERM.
func TestDev(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	dev := startCourier(t, nil, "dev", "--http-addr", "127.0.0.1:0")
	store := dev.waitOutput(storeAddrRE, 20*time.Second)
	httpAddr := dev.waitOutput(httpAddrRE, 5*time.Second)
	dev.waitOutput(regexp.MustCompile(`hello from courier dev`), 10*time.Second)
	if !strings.Contains(dev.stderr.String(), "nothing persists") {
		t.Errorf("dev mode does not warn that nothing persists:\n%s", dev.stderr.String())
	}
	if want := "enqueue --redis " + store + " --queue demo"; !strings.Contains(dev.stdout.String(), want) {
		t.Errorf("stdout does not print the enqueue command %q:\n%s", want, dev.stdout.String())
	}

	code, out, errOut := courierCLI(t.Context(), t, nil, "enqueue", "--redis", store, "--queue", "demo", "--payload", "from the test")
	if code != 0 {
		t.Fatalf("enqueue: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	dev.waitOutput(regexp.MustCompile(`msg=job queue=demo id=`+regexp.QuoteMeta(id)+` attempt=1 payload="from the test"`), 10*time.Second)

	code, out, errOut = courierCLI(t.Context(), t, nil, "inspect", "--redis", store, "--queue", "demo")
	if code != 0 || !strings.Contains(out, "demo") {
		t.Errorf("inspect: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200} {
		resp, err := http.Get("http://" + httpAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}

	dev.signal(syscall.SIGTERM)
	if code := dev.wait(15 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	if !strings.Contains(dev.stderr.String(), "msg=drained") {
		t.Errorf("no drain summary logged:\n%s", dev.stderr.String())
	}
}

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/seed-53d105c9/courier/handlers/webhook"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// receiver is a webhook endpoint that records what it receives.
type receiver struct {
	t        *testing.T
	secret   string
	delay    time.Duration // how long each request takes, unless the client gives up
	srv      *httptest.Server
	inFlight atomic.Int64

	mu       sync.Mutex
	seen     map[string]int // job id → deliveries
	attempts map[string][]int
	finished int // requests answered 200 after their full delay
	badSig   int
}

func newReceiver(t *testing.T, secret string, delay time.Duration) *receiver {
	r := &receiver{t: t, secret: secret, delay: delay, seen: map[string]int{}, attempts: map[string][]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	body, _ := io.ReadAll(req.Body)
	id := req.Header.Get("Courier-Job-Id")
	attempt, _ := strconv.Atoi(req.Header.Get("Courier-Attempt"))
	ok := webhook.Verify([]byte(r.secret), req.Header, body) == nil
	if r.delay > 0 {
		select {
		case <-time.After(r.delay):
		case <-req.Context().Done():
			return // the daemon gave up on this request
		}
	}
	r.mu.Lock()
	r.seen[id]++
	r.attempts[id] = append(r.attempts[id], attempt)
	r.finished++
	if !ok {
		r.badSig++
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// counts returns distinct ids, total deliveries and bad signatures.
func (r *receiver) counts() (distinct, total, badSig int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.seen {
		total += n
	}
	return len(r.seen), total, r.badSig
}

func (r *receiver) waitDistinct(n int, d time.Duration) {
	r.t.Helper()
	testkit.EventuallyState(r.t, d, func() (bool, string) {
		got, _, _ := r.counts()
		return got >= n, fmt.Sprintf("the receiver saw %d distinct jobs, want %d", got, n)
	})
}

func (r *receiver) waitInFlight(n int64, d time.Duration) {
	r.t.Helper()
	testkit.EventuallyState(r.t, d, func() (bool, string) {
		got := r.inFlight.Load()
		return got >= n, fmt.Sprintf("%d requests in flight, want %d", got, n)
	})
}

// webhookConfig is a configuration with one webhook queue "hooks".
func webhookConfig(addr, prefix, url, secret string, concurrency int, shutdown time.Duration) string {
	return fmt.Sprintf(`
redis:
  addr: %s
  prefix: %s
http:
  addr: 127.0.0.1:0
shutdown:
  timeout: %s
queues:
  hooks:
    handler: webhook
    concurrency: %d
    backoff:
      steps: [100ms]
    webhook:
      url: %s
      allow_networks: [127.0.0.0/8]
      secret: %s
      timeout: 60s
`, addr, prefix, shutdown, concurrency, url, secret)
}

// testClient is an operator's client on single Redis under prefix.
func testClient(t *testing.T, prefix string) *admin.Client {
	t.Helper()
	c, err := admin.NewClient(testkit.Single(t), worker.Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunDeliversEveryJob: courier run with a webhook queue delivers 1,000
// jobs, enqueued through courier enqueue and the Go client, each once.
func TestRunDeliversEveryJob(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	recv := newReceiver(t, "s3cret", 0)
	cfg := writeConfig(t, webhookConfig(addr, prefix, recv.srv.URL+"/hook", "s3cret", 32, 10*time.Second))
	daemon := startCourier(t, nil, "run", "--config", cfg)
	daemon.waitOutput(httpAddrRE, 20*time.Second)

	const viaCLI, viaGo = 100, 900
	ids := make(chan string, viaCLI)
	g, ctx := errgroup.WithContext(t.Context())
	g.SetLimit(8)
	for i := range viaCLI {
		g.Go(func() error {
			code, out, errOut := courierCLI(ctx, t, nil, "enqueue", "--config", cfg, "--queue", "hooks",
				"--id", fmt.Sprintf("cli-%03d", i), "--payload", fmt.Sprintf(`{"n":%d}`, i))
			if code != 0 {
				return fmt.Errorf("enqueue %d: exit %d: %s", i, code, errOut)
			}
			ids <- strings.TrimSpace(out)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	close(ids)
	for id := range ids {
		if !strings.HasPrefix(id, "cli-") {
			t.Errorf("courier enqueue printed %q, want the job id", id)
		}
	}
	specs := make([]worker.JobSpec, viaGo)
	for i := range specs {
		specs[i] = worker.JobSpec{Queue: "hooks", Payload: fmt.Appendf(nil, `{"n":%d}`, viaCLI+i)}
	}
	if _, err := testClient(t, prefix).Enqueue(t.Context(), specs); err != nil {
		t.Fatal(err)
	}

	recv.waitDistinct(viaCLI+viaGo, 60*time.Second)
	daemon.signal(syscall.SIGTERM)
	if code := daemon.wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	distinct, total, badSig := recv.counts()
	t.Logf("jobs: %d enqueued (%d via courier enqueue, %d via the Go client); receiver: %d distinct, %d deliveries, %d duplicates",
		viaCLI+viaGo, viaCLI, viaGo, distinct, total, total-distinct)
	if distinct != viaCLI+viaGo || total != distinct {
		t.Errorf("%d distinct ids in %d deliveries, want %d each", distinct, total, viaCLI+viaGo)
	}
	if badSig > 0 {
		t.Errorf("%d deliveries had a bad signature", badSig)
	}
}

var drainedRE = regexp.MustCompile(`drained finished=(\d+) returned=(\d+)`)

// TestDrainFinishesRunningJobs: jobs that take 2s are running when SIGTERM
// arrives with shutdown.timeout 5s; they finish, courier exits 0, none lost.
func TestDrainFinishesRunningJobs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	recv := newReceiver(t, "k", 2*time.Second)
	cfg := writeConfig(t, webhookConfig(addr, prefix, recv.srv.URL, "k", 8, 5*time.Second))
	daemon := startCourier(t, nil, "run", "--config", cfg)
	daemon.waitOutput(httpAddrRE, 20*time.Second)

	const jobs = 8
	client := testClient(t, prefix)
	specs := make([]worker.JobSpec, jobs)
	for i := range specs {
		specs[i] = worker.JobSpec{Queue: "hooks", Payload: []byte("slow")}
	}
	if _, err := client.Enqueue(t.Context(), specs); err != nil {
		t.Fatal(err)
	}
	recv.waitInFlight(jobs, 10*time.Second)
	start := time.Now()
	daemon.signal(syscall.SIGTERM)
	code := daemon.wait(15 * time.Second)
	took := time.Since(start)
	m := drainedRE.FindStringSubmatch(daemon.stderr.String())
	distinct, total, _ := recv.counts()
	stats, err := client.Stats(t.Context(), "hooks")
	if err != nil {
		t.Fatal(err)
	}
	lost := jobs - distinct - int(stats.Ready+stats.Scheduled+stats.Active)
	t.Logf("drain with jobs of 2s, shutdown.timeout 5s: exit %d after %s; finished %d, returned %s, lost %d (receiver: %d deliveries)",
		code, took.Round(time.Millisecond), distinct, matchOr(m, 2, "?"), lost, total)
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if m == nil || m[1] != strconv.Itoa(jobs) || m[2] != "0" {
		t.Errorf("drain log %v, want finished=%d returned=0", m, jobs)
	}
	if distinct != jobs || total != jobs || stats != (admin.QueueStats{}) {
		t.Errorf("receiver saw %d distinct / %d deliveries, queue left %+v; want %d, %d, empty", distinct, total, stats, jobs, jobs)
	}
}

// TestDrainReturnsUnfinishedJobs: jobs that would take 30s are running when
// SIGTERM arrives with shutdown.timeout 1s; they are cancelled and put back
// due, courier exits 0, and a second daemon completes them with the attempt
// count unchanged.
func TestDrainReturnsUnfinishedJobs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	slow := newReceiver(t, "k", 30*time.Second)
	daemon := startCourier(t, nil, "run", "--config", writeConfig(t, webhookConfig(addr, prefix, slow.srv.URL, "k", 8, time.Second)))
	daemon.waitOutput(httpAddrRE, 20*time.Second)

	const jobs = 5
	client := testClient(t, prefix)
	var ids []string
	for i := range jobs {
		r, err := enqueueOne(t.Context(), client, worker.JobSpec{Queue: "hooks", ID: fmt.Sprintf("slow-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	slow.waitInFlight(jobs, 10*time.Second)
	start := time.Now()
	daemon.signal(syscall.SIGTERM)
	code := daemon.wait(10 * time.Second)
	took := time.Since(start)
	m := drainedRE.FindStringSubmatch(daemon.stderr.String())
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if m == nil || m[1] != "0" || m[2] != strconv.Itoa(jobs) {
		t.Errorf("drain log %v, want finished=0 returned=%d", m, jobs)
	}
	for _, id := range ids {
		j, err := client.Get(t.Context(), "hooks", id)
		if err != nil {
			t.Fatalf("job %s lost: %v", id, err)
		}
		if j.State != worker.StateReady || j.Attempt != 0 {
			t.Errorf("job %s after the drain: state %s, %d attempts spent; want ready, 0", id, j.State, j.Attempt)
		}
	}

	fast := newReceiver(t, "k", 0)
	second := startCourier(t, nil, "run", "--config", writeConfig(t, webhookConfig(addr, prefix, fast.srv.URL, "k", 8, time.Second)))
	fast.waitDistinct(jobs, 20*time.Second)
	second.signal(syscall.SIGTERM)
	if code := second.wait(10 * time.Second); code != 0 {
		t.Errorf("second daemon exit code %d", code)
	}
	fast.mu.Lock()
	defer fast.mu.Unlock()
	for _, id := range ids {
		if got := fast.attempts[id]; len(got) != 1 || got[0] != 1 {
			t.Errorf("job %s reached the second daemon as attempts %v, want [1] (the returned attempt was not spent)", id, got)
		}
	}
	t.Logf("drain with jobs of 30s, shutdown.timeout 1s: exit %d after %s; finished 0, returned %s, lost 0; second daemon completed %d, each on attempt 1",
		code, took.Round(time.Millisecond), matchOr(m, 2, "?"), len(fast.seen))
}

// TestSecondSignalExitsAtOnce: a second SIGTERM during a drain exits at
// once with a non-zero code; the job stays active and returns through its
// lease.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	slow := newReceiver(t, "k", 30*time.Second)
	daemon := startCourier(t, nil, "run", "--config", writeConfig(t, webhookConfig(addr, prefix, slow.srv.URL, "k", 2, 20*time.Second)))
	daemon.waitOutput(httpAddrRE, 20*time.Second)
	client := testClient(t, prefix)
	if _, err := enqueueOne(t.Context(), client, worker.JobSpec{Queue: "hooks", ID: "held"}); err != nil {
		t.Fatal(err)
	}
	slow.waitInFlight(1, 10*time.Second)
	daemon.signal(syscall.SIGTERM)
	daemon.waitOutput(regexp.MustCompile(`draining`), 5*time.Second)
	start := time.Now()
	daemon.signal(syscall.SIGTERM)
	code := daemon.wait(5 * time.Second)
	if code == 0 {
		t.Errorf("exit code 0 after a second signal, want non-zero")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s to exit after the second signal", took)
	}
	j, err := client.Get(t.Context(), "hooks", "held")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != worker.StateActive {
		t.Errorf("job state %s, want active (it returns when its lease lapses)", j.State)
	}
}

func matchOr(m []string, i int, def string) string {
	if m == nil {
		return def
	}
	return m[i]
}

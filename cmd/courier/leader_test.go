package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// The tests in this file run fleets of courier processes on one prefix and
// watch each queue's leader lock, <prefix>:{<queue>}:leader, in Redis while
// they kill or stop its holder.

// Leases of the fleets below: short, so that a dead process's leadership
// and jobs come back within seconds.
const (
	fleetLeaderLease = 2 * time.Second
	fleetJobLease    = 2 * time.Second
)

// fleetConfig is a configuration with the fleets' leases and the queues
// section queues (indented by two spaces).
func fleetConfig(addr, prefix, queues string) string {
	return fmt.Sprintf(`
redis:
  addr: %s
  prefix: %s
http:
  addr: 127.0.0.1:0
shutdown:
  timeout: 1s
lease:
  duration: %s
leader:
  lease: %s
queues:
%s`, addr, prefix, fleetJobLease, fleetLeaderLease, queues)
}

// heldQueues are queues a, b and c: a delivers to url/<process name>, whose
// receiver holds every request; b and c log.
func heldQueues(url, name string) string {
	return fmt.Sprintf(`  a:
    handler: webhook
    concurrency: %d
    max_attempts: 25
    timeout: 5m
    webhook:
      url: %s/%s
      allow_networks: [127.0.0.0/8]
      secret: k
      timeout: 5m
  b:
    handler: log
  c:
    handler: log
`, heldPerProcess, url, name)
}

// heldPerProcess is queue a's concurrency in the held fleets; they hold
// heldPerProcess jobs per process, so every process's slots are full and a
// replacement takes what a dead process left.
const heldPerProcess = 2

// fleet is a set of courier processes sharing a prefix.
type fleet struct {
	t      *testing.T
	rdb    rueidis.Client
	prefix string
	config func(name string) string // the YAML of the process called name
	n      int
	live   map[string]*proc
	uuids  map[string]string // process name → the uuid of its leader fields
}

func newFleet(t *testing.T, prefix string, config func(name string) string) *fleet {
	return &fleet{t: t, rdb: testkit.Single(t), prefix: prefix, config: config, live: map[string]*proc{}, uuids: map[string]string{}}
}

// start starts a process without waiting for it.
func (f *fleet) start() (string, *proc) {
	f.t.Helper()
	f.n++
	name := "p" + strconv.Itoa(f.n)
	p := startCourier(f.t, nil, "run", "--config", writeConfig(f.t, f.config(name)))
	f.live[name] = p
	return name, p
}

// startReady starts a process and waits until its pool runs.
func (f *fleet) startReady() string {
	f.t.Helper()
	name, p := f.start()
	p.waitOutput(poolStartedRE, 20*time.Second)
	return name
}

func (f *fleet) names() []string {
	var out []string
	for name := range f.live {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// fields returns the fields of queue's leader lock.
func (f *fleet) fields(queue string) map[string]string {
	f.t.Helper()
	return testkit.HGetAll(f.t, f.rdb, f.prefix+":{"+queue+"}:leader")
}

// leadsByLog reports whether p's log says it leads queue now: it logged
// "leading queue" more often than the end of a leadership.
func leadsByLog(p *proc, queue string) bool {
	re := regexp.MustCompile(`msg="(leading queue|released leadership|release leadership|lost leadership)" queue=` + regexp.QuoteMeta(queue) + `(\s|$)`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(p.stderr.String(), -1) {
		if m[1] == "leading queue" {
			n++
		} else {
			n--
		}
	}
	return n > 0
}

// leader waits until queue's leader lock has one field and one live
// process says it leads the queue, and returns both.
func (f *fleet) leader(queue string) (field, name string) {
	f.t.Helper()
	testkit.Poll{Every: logPollEvery}.EventuallyState(f.t, 20*time.Second, func() (bool, string) {
		fields := f.fields(queue)
		var leaders []string
		for n, p := range f.live {
			if leadsByLog(p, queue) {
				leaders = append(leaders, n)
			}
		}
		if len(fields) == 1 && len(leaders) == 1 {
			for k := range fields {
				field = k
			}
			// The field did not change while the logs were read.
			if again := f.fields(queue); len(again) == 1 && again[field] != "" {
				name = leaders[0]
				return true, ""
			}
		}
		return false, fmt.Sprintf("queue %s: no settled leader: lock fields %v, leaders by their logs %v", queue, fields, leaders)
	})
	uuid, holder, ok := strings.Cut(field, ":")
	if !ok || holder != "leader" {
		f.t.Errorf("queue %s: leader field %q, want <uuid>:leader", queue, field)
	}
	if known, ok := f.uuids[name]; ok && known != uuid {
		f.t.Errorf("process %s led with uuid %s, then %s: want one uuid per process", name, known, uuid)
	}
	f.uuids[name] = uuid
	return field, name
}

// waitNewLeader polls queue's leader lock every poll until it holds a field
// other than old, and returns the time since t0.
func (f *fleet) waitNewLeader(queue, old string, t0 time.Time, poll, limit time.Duration) time.Duration {
	f.t.Helper()
	var took time.Duration
	testkit.Poll{Every: poll}.EventuallyState(f.t, limit-time.Since(t0), func() (bool, string) {
		fields := f.fields(queue)
		for k := range fields {
			if k != old {
				took = time.Since(t0)
				return true, ""
			}
		}
		return false, fmt.Sprintf("queue %s: the leader lock still held %v (or nothing) %s after the leader was stopped", queue, fields, limit)
	})
	return took
}

// holdReceiver is a webhook endpoint that holds every request until its
// client gives up, so the jobs stay active. The URL's path names the
// process that sent the request.
type holdReceiver struct {
	t    *testing.T
	srv  *httptest.Server
	stop chan struct{}

	mu       sync.Mutex
	held     map[string]map[string]int // process → job id → attempt, while the request is open
	arrivals map[string][]arrival      // job id → every request for it
}

// arrival is one request for a job.
type arrival struct {
	proc    string
	attempt int
	at      time.Time
}

func newHoldReceiver(t *testing.T) *holdReceiver {
	r := &holdReceiver{t: t, stop: make(chan struct{}), held: map[string]map[string]int{}, arrivals: map[string][]arrival{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	t.Cleanup(func() { close(r.stop) }) // before Close, which waits for the handlers
	return r
}

func (r *holdReceiver) serve(w http.ResponseWriter, req *http.Request) {
	proc := strings.TrimPrefix(req.URL.Path, "/")
	id := req.Header.Get("Courier-Job-Id")
	attempt, _ := strconv.Atoi(req.Header.Get("Courier-Attempt"))
	r.mu.Lock()
	r.arrivals[id] = append(r.arrivals[id], arrival{proc: proc, attempt: attempt, at: time.Now()})
	if r.held[proc] == nil {
		r.held[proc] = map[string]int{}
	}
	r.held[proc][id] = attempt
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.held[proc], id)
		r.mu.Unlock()
	}()
	select {
	case <-req.Context().Done():
	case <-r.stop:
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

// heldBy returns the jobs proc's requests hold: job id → attempt.
func (r *holdReceiver) heldBy(proc string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for id, a := range r.held[proc] {
		out[id] = a
	}
	return out
}

// waitSpread waits until each of procs holds n jobs.
func (r *holdReceiver) waitSpread(procs []string, n int, d time.Duration) {
	r.t.Helper()
	testkit.EventuallyState(r.t, d, func() (bool, string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		counts := map[string]int{}
		ok := true
		for _, p := range procs {
			counts[p] = len(r.held[p])
			ok = ok && counts[p] == n
		}
		return ok, fmt.Sprintf("jobs held per process: %v, want %d each", counts, n)
	})
}

// waitRedelivered waits until every job of jobs (id → the attempt victim
// ran) arrived again from another process after t0, checks that it came as
// the next attempt, and returns the time from t0 to the last arrival.
func (r *holdReceiver) waitRedelivered(jobs map[string]int, victim string, t0 time.Time, d time.Duration) time.Duration {
	r.t.Helper()
	var last time.Duration
	testkit.EventuallyState(r.t, d-time.Since(t0), func() (bool, string) {
		last = 0
		missing := 0
		r.mu.Lock()
		defer r.mu.Unlock()
		for id, attempt := range jobs {
			i := slices.IndexFunc(r.arrivals[id], func(a arrival) bool { return a.at.After(t0) && a.proc != victim })
			if i < 0 {
				missing++
				continue
			}
			a := r.arrivals[id][i]
			last = max(last, a.at.Sub(t0))
			if a.attempt != attempt+1 {
				r.t.Errorf("job %s came back as attempt %d from %s, want %d (the killed process ran attempt %d)", id, a.attempt, a.proc, attempt+1, attempt)
				jobs[id] = a.attempt - 1 // report it once
			}
		}
		return missing == 0, fmt.Sprintf("%d of the %d jobs of the killed process %s did not come back within %s of its kill", missing, len(jobs), victim, d)
	})
	return last
}

// pause waits d, or fails when the test's context ends.
func pause(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-time.After(d):
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func roundAll(ds []time.Duration, to time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(to)
	}
	return out
}

// startHeldFleet starts 3 processes serving a, b and c, and enqueues
// heldPerProcess jobs per process to a, held by recv.
func startHeldFleet(t *testing.T, recv *holdReceiver) *fleet {
	t.Helper()
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	f := newFleet(t, prefix, func(name string) string {
		return fleetConfig(addr, prefix, heldQueues(recv.srv.URL, name))
	})
	for range 3 {
		f.start()
	}
	for _, name := range f.names() {
		f.live[name].waitOutput(poolStartedRE, 20*time.Second)
	}
	specs := make([]worker.JobSpec, 3*heldPerProcess)
	for i := range specs {
		specs[i] = worker.JobSpec{Queue: "a", ID: fmt.Sprintf("held-%d", i)}
	}
	if _, err := testClient(t, prefix).Enqueue(t.Context(), specs); err != nil {
		t.Fatal(err)
	}
	recv.waitSpread(f.names(), heldPerProcess, 20*time.Second)
	return f
}

// TestLeaderFailoverAfterKill: with leader.lease 2s, SIGKILL the leader of
// queue a among 3 processes; another process holds the leader lock within
// the lease + 1s, and the jobs the killed process was running come back
// through the new leader's recovery as their next attempt.
func TestLeaderFailoverAfterKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	recv := newHoldReceiver(t)
	f := startHeldFleet(t, recv)

	const rounds = 10
	var failovers, recoveries []time.Duration
	for range rounds {
		field, victim := f.leader("a")
		jobs := recv.heldBy(victim)
		if len(jobs) != heldPerProcess {
			t.Fatalf("leader %s holds %d jobs, want %d", victim, len(jobs), heldPerProcess)
		}
		p := f.live[victim]
		// Kill at any point of the watchdog's renewal period, not just
		// after the lock changed hands.
		pause(t, rand.N(fleetLeaderLease/3))
		t0 := time.Now()
		p.signal(syscall.SIGKILL)
		delete(f.live, victim)
		f.start() // the replacement takes the killed process's jobs
		took := f.waitNewLeader("a", field, t0, 5*time.Millisecond, fleetLeaderLease+10*time.Second)
		failovers = append(failovers, took)
		if took > fleetLeaderLease+time.Second {
			t.Errorf("a new leader of a took %s after SIGKILL, want at most leader.lease + 1s = %s", took, fleetLeaderLease+time.Second)
		}
		p.wait(10 * time.Second)
		back := recv.waitRedelivered(jobs, victim, t0, fleetJobLease+fleetLeaderLease+10*time.Second)
		recoveries = append(recoveries, back)
		if limit := fleetJobLease + 3*time.Second; back > limit {
			t.Errorf("the killed process's jobs came back after %s, want within lease.duration + 3s = %s", back, limit)
		}
		recv.waitSpread(f.names(), heldPerProcess, 20*time.Second)
	}
	t.Logf("failover after SIGKILL of queue a's leader (leader.lease %s), %d samples: median %s, all %v",
		fleetLeaderLease, rounds, median(failovers).Round(time.Millisecond), roundAll(failovers, time.Millisecond))
	t.Logf("the killed leader's %d running jobs came back (next attempt, another process) after: median %s, all %v (lease.duration %s, recover.interval 1s)",
		heldPerProcess, median(recoveries).Round(time.Millisecond), roundAll(recoveries, time.Millisecond), fleetJobLease)
}

// TestLeaderFailoverAfterTerm: SIGTERM releases the leader's locks at once:
// another process holds the lock within milliseconds, while the stopped
// process still drains its jobs.
func TestLeaderFailoverAfterTerm(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	recv := newHoldReceiver(t)
	f := startHeldFleet(t, recv)

	const maxRounds, budget = 10, 60 * time.Second
	queues := []string{"a", "b", "c"}
	var samples []time.Duration
	start := time.Now()
	for i := 0; i < maxRounds && time.Since(start) < budget; i++ {
		queue := queues[i%len(queues)]
		field, victim := f.leader(queue)
		p := f.live[victim]
		t0 := time.Now()
		p.signal(syscall.SIGTERM)
		// Finer than the 5ms of the kill test: the handover takes about that.
		took := f.waitNewLeader(queue, field, t0, 500*time.Microsecond, 10*time.Second)
		samples = append(samples, took)
		if took >= time.Second {
			t.Errorf("a new leader of %s took %s after SIGTERM, want well under 1s", queue, took)
		}
		delete(f.live, victim)
		if code := p.wait(10 * time.Second); code != 0 {
			t.Errorf("process %s exited %d after SIGTERM, want 0", victim, code)
		}
		released := regexp.MustCompile(`msg="released leadership" queue=` + queue + `(\s|$)`)
		if !released.MatchString(p.stderr.String()) {
			t.Errorf("process %s did not log that it released queue %s; stderr:\n%s", victim, queue, p.stderr.String())
		}
		f.startReady()
		recv.waitSpread(f.names(), heldPerProcess, 20*time.Second)
	}
	t.Logf("failover after SIGTERM of a queue's leader (queues a, b, c in turn), %d samples: median %s, all %v",
		len(samples), median(samples).Round(100*time.Microsecond), roundAll(samples, 100*time.Microsecond))
}

var periodicIDRE = regexp.MustCompile(`^periodic:tick:(\d+)$`)

// TestPeriodicFiresOnceAcrossFailovers: 3 processes serve queue p with a
// schedule firing every second; its leader is killed twice. Every second
// from the first fire to the last is enqueued, none twice.
func TestPeriodicFiresOnceAcrossFailovers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr, prefix := testkit.SingleAddr(t), testkit.Prefix(t)
	recv := newReceiver(t, "k", 0)
	cfg := fleetConfig(addr, prefix, fmt.Sprintf(`  p:
    handler: webhook
    concurrency: 4
    periodic:
      tick:
        every: 1s
        payload: tick
    webhook:
      url: %s
      allow_networks: [127.0.0.0/8]
      secret: k
`, recv.srv.URL))
	f := newFleet(t, prefix, func(string) string { return cfg })
	for range 3 {
		f.startReady()
	}
	const kills, between = 2, 8 * time.Second
	var failovers []time.Duration
	for range kills {
		pause(t, between)
		field, victim := f.leader("p")
		p := f.live[victim]
		t0 := time.Now()
		p.signal(syscall.SIGKILL)
		delete(f.live, victim)
		failovers = append(failovers, f.waitNewLeader("p", field, t0, 5*time.Millisecond, fleetLeaderLease+10*time.Second))
		p.wait(10 * time.Second)
		f.startReady()
	}
	pause(t, between)
	for _, name := range f.names() {
		f.live[name].signal(syscall.SIGTERM)
	}
	for _, name := range f.names() {
		if code := f.live[name].wait(10 * time.Second); code != 0 {
			t.Errorf("process %s exited %d after SIGTERM, want 0", name, code)
		}
	}

	// Every fire was delivered or is still in the queue.
	fires := map[int64]bool{}
	addFire := func(id string) {
		m := periodicIDRE.FindStringSubmatch(id)
		if m == nil {
			t.Errorf("job id %q in queue p, want periodic:tick:<ms>", id)
			return
		}
		ms, _ := strconv.ParseInt(m[1], 10, 64)
		fires[ms] = true
	}
	recv.mu.Lock()
	deliveries, redelivered := 0, 0
	for id, attempts := range recv.attempts {
		addFire(id)
		deliveries += len(attempts)
		if len(attempts) > 1 {
			redelivered++
		}
		if slices.Index(attempts, 1) != lastIndex(attempts, 1) {
			t.Errorf("fire %s delivered as attempt 1 more than once (attempts %v): enqueued twice", id, attempts)
		}
	}
	recv.mu.Unlock()
	rdb := testkit.Single(t)
	left, err := rdb.Do(t.Context(), rdb.B().Hkeys().Key(prefix+":{p}:jobs").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range left {
		addFire(id)
	}
	lastRecorded, err := rdb.Do(t.Context(), rdb.B().Hget().Key(prefix+":{p}:periodic").Field("tick").Build()).AsInt64()
	if err != nil {
		t.Fatalf("the last fire of tick in Redis: %v", err)
	}

	ms := make([]int64, 0, len(fires))
	for m := range fires {
		ms = append(ms, m)
	}
	slices.Sort(ms)
	if len(ms) == 0 {
		t.Fatal("no fire of tick was seen")
	}
	var gaps []string
	for i := 1; i < len(ms); i++ {
		if d := ms[i] - ms[i-1]; d != 1000 {
			gaps = append(gaps, fmt.Sprintf("%d→%d (%dms)", ms[i-1], ms[i], d))
		}
	}
	first, last := ms[0], ms[len(ms)-1]
	want := int((last-first)/1000) + 1
	t.Logf("periodic tick every 1s over %s with %d leader kills (failovers %v): %d fires from %d to %d, want %d; %d deliveries, %d fires delivered more than once (a killed worker's job), %d left in the queue at the end",
		time.Duration(last-first)*time.Millisecond, kills, roundAll(failovers, time.Millisecond), len(ms), first, last, want, deliveries, redelivered, len(left))
	if len(gaps) > 0 {
		t.Errorf("fires not 1000ms apart: %v", gaps)
	}
	if first%1000 != 0 {
		t.Errorf("first fire at %dms, want a whole second", first)
	}
	if lastRecorded != last {
		t.Errorf("Redis records the last fire at %d, the last fire seen is %d", lastRecorded, last)
	}
	if atLeast := int(3*between/time.Second) - 6; len(ms) < atLeast {
		t.Errorf("%d fires in about %s, want at least %d", len(ms), 3*between, atLeast)
	}
}

func lastIndex(s []int, v int) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == v {
			return i
		}
	}
	return -1
}

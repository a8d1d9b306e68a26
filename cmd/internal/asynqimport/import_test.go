package asynqimport

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// courierSide is the Courier an import writes to.
type courierSide struct {
	rdb      rueidis.Client
	cfg      worker.Config
	admin    *admin.Client
	producer *worker.Client
	addrs    []string
}

// backends runs f against Courier on a single Redis, on a Cluster, and on
// a Cluster where the target queue q has 4 partitions; asynq's side is a
// Redis of each subtest's own (asynq's keys have no prefix).
func backends(t *testing.T, q string, f func(t *testing.T, cs courierSide)) {
	for _, b := range []struct {
		name       string
		partitions int
		connect    func(testing.TB) rueidis.Client
		addrs      func(testing.TB) []string
	}{
		{"single", 1, testkit.Single, func(t testing.TB) []string { return []string{testkit.SingleAddr(t)} }},
		{"cluster", 1, testkit.Cluster, testkit.ClusterAddrs},
		{"cluster-partitioned", 4, testkit.Cluster, testkit.ClusterAddrs},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rdb := b.connect(t)
			cfg := worker.Config{Prefix: testkit.Prefix(t)}
			a, err := admin.NewClient(rdb, cfg)
			if err != nil {
				t.Fatal(err)
			}
			p, err := worker.NewClient(rdb, cfg)
			if err != nil {
				t.Fatal(err)
			}
			cs := courierSide{rdb: rdb, cfg: cfg, admin: a, producer: p, addrs: b.addrs(t)}
			if b.partitions > 1 {
				split(t, cs, q, b.partitions)
			}
			f(t, cs)
		})
	}
}

// split gives Courier queue q n partitions, as a daemon serving it does
// at its start; the queue is paused first, so the daemon runs nothing.
func split(t *testing.T, cs courierSide, q string, n int) {
	t.Helper()
	if err := cs.admin.Pause(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	h := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	if err := reg.Register(q, h, worker.QueueOptions{Partitions: n}); err != nil {
		t.Fatal(err)
	}
	d, err := worker.NewDaemon(cs.rdb, reg, cs.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	testkit.Eventually(t, 20*time.Second, "the queue's layout of "+strconv.Itoa(n)+" partitions", func() bool {
		got, err := cs.admin.Partitions(t.Context(), q)
		return err == nil && got == n
	})
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("daemon: %v", err)
	}
}

// importOnce runs an import of every asynq queue of src into cs.
func importOnce(t *testing.T, src rueidis.Client, cs courierSide, o Options) *Summary {
	t.Helper()
	o.Validate = cs.producer.Validate
	sum, err := Run(t.Context(), src, cs.admin, o)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return sum
}

// tally adds up a summary's rows by state.
func tally(sum *Summary) (found, moved, already, skipped map[string]int) {
	found, moved, already, skipped = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range sum.Rows {
		found[r.State] += r.Found
		moved[r.State] += r.Moved
		already[r.State] += r.Already
		skipped[r.State] += r.SkippedTotal()
	}
	return
}

// asynqKeys returns every key of asynq's Redis with its length, for
// "nothing changed" checks.
func asynqKeys(t *testing.T, src rueidis.Client) map[string]string {
	t.Helper()
	keys, err := src.Do(t.Context(), src.B().Keys().Pattern("asynq:{*").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		d, err := src.Do(t.Context(), src.B().Dump().Key(k).Build()).ToString()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatal(err)
		}
		out[k] = d
	}
	return out
}

// exactlyOnce checks that every seeded task is a Courier job of the state
// it should have, and that Courier holds no other job and asynq none of
// them: it returns the lost and duplicated counts.
func exactlyOnce(t *testing.T, src rueidis.Client, cs courierSide, q string, s *seeded) (lost, duplicated int) {
	t.Helper()
	want := map[string]worker.State{"pending": worker.StateReady, "scheduled": worker.StateScheduled, "retry": worker.StateScheduled, "archived": worker.StateDead}
	var missing, wrong atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for state, ids := range s.byState {
		for _, id := range ids {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				j, err := cs.admin.Get(t.Context(), q, id)
				switch {
				case errors.Is(err, worker.ErrNotFound):
					missing.Add(1)
				case err != nil:
					t.Errorf("Get %s: %v", id, err)
				case j.State != want[state]:
					wrong.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	if wrong.Load() > 0 {
		t.Errorf("%d jobs are in the wrong state", wrong.Load())
	}
	st, err := cs.admin.Stats(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	total := int(st.Scheduled + st.Ready + st.Active + st.Dead)
	left := 0
	n, err := counts(t.Context(), src, q)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range n {
		left += int(c)
	}
	// A task still in asynq and in Courier would run twice; one in
	// neither is lost.
	duplicated = total - (s.total() - int(missing.Load())) + min(left, s.total()-int(missing.Load()))
	lost = max(int(missing.Load())-left, 0)
	if left > 0 {
		t.Errorf("%d tasks left in asynq", left)
	}
	return lost, duplicated
}

func TestImportAsynq(t *testing.T) {
	t.Parallel()
	const q = "mail"
	backends(t, q, func(t *testing.T, cs courierSide) {
		a := testkit.StartPrivate(t)
		src := a.Client(t)
		s := seed(t, a.Addr, q, 40)

		// The dry run reads every task and changes nothing.
		before := asynqKeys(t, src)
		dry := importOnce(t, src, cs, Options{})
		found, _, _, skipped := tally(dry)
		for state, ids := range s.byState {
			if found[state] != len(ids) || skipped[state] != 0 {
				t.Errorf("dry run, %s: found %d, skipped %d; want %d found, none skipped", state, found[state], skipped[state], len(ids))
			}
		}
		if after := asynqKeys(t, src); len(after) != len(before) {
			t.Errorf("the dry run changed asynq: %d keys, then %d", len(before), len(after))
		} else {
			for k, v := range before {
				if after[k] != v {
					t.Errorf("the dry run changed asynq's %s", k)
				}
			}
		}
		if st, _ := cs.admin.Stats(t.Context(), q); st.Ready+st.Scheduled+st.Dead != 0 {
			t.Errorf("the dry run wrote to Courier: %+v", st)
		}
		var out bytes.Buffer
		dry.Write(&out)
		if !strings.Contains(out.String(), "dry run: nothing changed") || !strings.Contains(out.String(), "WOULD-MOVE") {
			t.Errorf("dry run output:\n%s", out.String())
		}

		// The import moves every task.
		sum := importOnce(t, src, cs, Options{Apply: true, Batch: 7})
		_, moved, already, skipped := tally(sum)
		for state, ids := range s.byState {
			if moved[state] != len(ids) || already[state] != 0 || skipped[state] != 0 {
				t.Errorf("%s: moved %d, already %d, skipped %d; want %d moved", state, moved[state], already[state], skipped[state], len(ids))
			}
		}
		if lost, dup := exactlyOnce(t, src, cs, q, s); lost != 0 || dup != 0 {
			t.Errorf("lost %d, duplicated %d", lost, dup)
		}
		checkFields(t, src, cs, q, s)

		// A second run moves nothing.
		again := importOnce(t, src, cs, Options{Apply: true})
		f2, m2, _, _ := tally(again)
		for state := range s.byState {
			if f2[state] != 0 || m2[state] != 0 {
				t.Errorf("second run, %s: found %d, moved %d", state, f2[state], m2[state])
			}
		}
	})
}

// checkFields checks the jobs of the special tasks and of one task of
// each state field by field.
func checkFields(t *testing.T, src rueidis.Client, cs courierSide, q string, s *seeded) {
	t.Helper()
	get := func(id string) *worker.Job {
		j, err := cs.admin.Get(t.Context(), q, id)
		if err != nil {
			t.Fatalf("Get %s: %v", id, err)
		}
		return j
	}
	if j := get(s.byState["pending"][0]); j.Kind != "image:resize" || !strings.HasPrefix(string(j.Payload), `{"img":`) || j.MaxAttempts != 4 || j.Attempt != 0 {
		t.Errorf("pending job: kind %q payload %q max %d attempt %d", j.Kind, j.Payload, j.MaxAttempts, j.Attempt)
	}
	if j := get(s.byState["scheduled"][0]); j.Kind != "billing:charge" || j.RunAt.Before(time.Now().Add(50*time.Minute)) {
		t.Errorf("scheduled job: kind %q run at %s", j.Kind, j.RunAt)
	}
	if j := get(s.byState["retry"][0]); j.Attempt != 1 || j.MaxAttempts != 6 || j.LastError != "smtp: 451 try later" || j.RunAt.Before(time.Now().Add(50*time.Minute)) {
		t.Errorf("retry job: attempt %d max %d error %q run at %s", j.Attempt, j.MaxAttempts, j.LastError, j.RunAt)
	}
	if j := get(s.byState["archived"][0]); j.State != worker.StateDead || j.DiedAt.IsZero() || j.Kind != "report:old" {
		t.Errorf("archived job: %s died %s kind %q", j.State, j.DiedAt, j.Kind)
	}
	if j := get(s.failedDead); j.LastError != "smtp: 451 try later" || j.MaxAttempts != 1 {
		t.Errorf("job archived by a failure: error %q max %d", j.LastError, j.MaxAttempts)
	}
	if j := get(s.timeout); j.Timeout != 90*time.Second || j.ID != "encode-1" {
		t.Errorf("job with a timeout: %s %s", j.ID, j.Timeout)
	}
	if j := get(s.deadline); j.Timeout < time.Hour || j.Timeout > 2*time.Hour {
		t.Errorf("job with a deadline in two hours: timeout %s", j.Timeout)
	}
	u := get(s.unique)
	if !strings.HasPrefix(u.UniqueKey, "email:digest:") || u.UniqueFor < 50*time.Minute || u.UniqueFor > time.Hour {
		t.Errorf("unique job: key %q for %s", u.UniqueKey, u.UniqueFor)
	}
	// Courier now holds the key: the same enqueue is refused.
	res, err := cs.producer.EnqueueMany(t.Context(), []worker.JobSpec{{Queue: q, Kind: "email:digest", UniqueKey: u.UniqueKey, Payload: []byte("weekly")}})
	if err != nil || !errors.Is(res[0].Err, worker.ErrUniqueKeyHeld) {
		t.Errorf("enqueue under the imported unique key: %v, %+v", err, res)
	}
	// asynq's lock is gone with its task.
	if n, _ := src.Do(t.Context(), src.B().Exists().Key(uniquePrefix(q)+u.UniqueKey).Build()).AsInt64(); n != 0 {
		t.Error("asynq's uniqueness lock is still there")
	}
}

// TestImportAsynqCrashBetweenScripts stops an import after Courier
// committed a round and before asynq's delete, then runs it again: the
// rerun finds the round in the ledger, writes nothing and finishes the
// deletes.
func TestImportAsynqCrashBetweenScripts(t *testing.T) {
	t.Parallel()
	const q = "billing"
	backends(t, q, func(t *testing.T, cs courierSide) {
		a := testkit.StartPrivate(t)
		src := a.Client(t)
		s := seed(t, a.Addr, q, 40)
		rounds := 0
		crash := errors.New("crash")
		o := Options{Apply: true, Batch: 5, Validate: cs.producer.Validate, afterCommit: func() error {
			if rounds++; rounds == 4 {
				return crash
			}
			return nil
		}}
		if _, err := Run(t.Context(), src, cs.admin, o); !errors.Is(err, crash) {
			t.Fatalf("the crashed run: %v", err)
		}

		// A dry run now reads the ledger: the crashed round's tasks are
		// already imported, not to move; it changes nothing.
		before, ledger := asynqKeys(t, src), ledgerSize(t, cs, q)
		dry := importOnce(t, src, cs, Options{Batch: 5})
		dryFound, dryAlready, dryWould := 0, 0, 0
		for _, r := range dry.Rows {
			dryFound += r.Found
			dryAlready += r.Already
		}
		var table bytes.Buffer
		dry.Write(&table)
		for _, line := range strings.Split(table.String(), "\n")[1:] {
			if f := strings.Fields(line); len(f) >= 5 && f[2] != "active" {
				n, _ := strconv.Atoi(f[4])
				dryWould += n
			}
		}
		if dryAlready != 5 || dryWould != dryFound-5 {
			t.Errorf("dry run after the crash: found %d, would move %d, already %d; want the crashed round's 5 already, the rest to move:\n%s", dryFound, dryWould, dryAlready, table.String())
		}
		if after := asynqKeys(t, src); !maps.Equal(before, after) {
			t.Error("the dry run changed asynq")
		}
		if n := ledgerSize(t, cs, q); n != ledger {
			t.Errorf("the dry run changed the ledger: %d entries, then %d", ledger, n)
		}

		sum := importOnce(t, src, cs, Options{Apply: true, Batch: 5})
		_, _, already, _ := tally(sum)
		total := 0
		for _, n := range already {
			total += n
		}
		if total != 5 {
			t.Errorf("the rerun found %d tasks imported before, want the crashed round's 5", total)
		}
		if lost, dup := exactlyOnce(t, src, cs, q, s); lost != 0 || dup != 0 {
			t.Errorf("lost %d, duplicated %d", lost, dup)
		}
	})
}

// TestImportAsynqDryRunNamesSkips: tasks Courier cannot take are skipped
// with their reason and left in asynq.
func TestImportAsynqSkips(t *testing.T) {
	t.Parallel()
	a := testkit.StartPrivate(t)
	src := a.Client(t)
	rdb := testkit.Single(t)
	cfg := worker.Config{Prefix: testkit.Prefix(t)}
	adm, err := admin.NewClient(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := worker.NewClient(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs := courierSide{rdb: rdb, cfg: cfg, admin: adm, producer: p}
	s := seed(t, a.Addr, "q1", 4)
	// A Courier job already has the id of a pending task.
	taken := s.byState["pending"][0]
	if _, err := p.Enqueue(t.Context(), worker.JobSpec{Queue: "courier-q1", ID: taken}); err != nil {
		t.Fatal(err)
	}
	sum := importOnce(t, src, cs, Options{Apply: true, Map: map[string]string{"q1": "courier-q1"}})
	var out bytes.Buffer
	sum.Write(&out)
	if !strings.Contains(out.String(), "1 a Courier job of the same id exists") || !strings.Contains(out.String(), "courier-q1") {
		t.Errorf("summary:\n%s", out.String())
	}
	n, err := counts(t.Context(), src, "q1")
	if err != nil || n["pending"] != 1 {
		t.Errorf("asynq's pending after the import: %v, %v; want the skipped task", n, err)
	}
	if _, err := Run(t.Context(), src, adm, Options{Queues: []string{"q{1}"}}); err == nil || !strings.Contains(err.Error(), "map it") {
		t.Errorf("an asynq queue name Courier refuses: %v", err)
	}
}

// TestImportAsynqScale is the import at a size set by COURIER_ASYNQ_IMPORT_N
// (skipped without it; e.g. 100000): a first run, a second run, and a
// run killed midway then run again, each timed and checked for lost and
// duplicated tasks.
func TestImportAsynqScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("COURIER_ASYNQ_IMPORT_N"))
	if n == 0 {
		t.Skip("set COURIER_ASYNQ_IMPORT_N (e.g. 100000) to run the import at scale")
	}
	const q = "scale"
	rdb := testkit.Single(t)
	cfg := worker.Config{Prefix: testkit.Prefix(t)}
	adm, err := admin.NewClient(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := worker.NewClient(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cs := courierSide{rdb: rdb, cfg: cfg, admin: adm, producer: p, addrs: []string{testkit.SingleAddr(t)}}

	a := testkit.StartPrivate(t)
	src := a.Client(t)
	start := time.Now()
	s := seed(t, a.Addr, q, n)
	t.Logf("seeded %d asynq tasks in %s", s.total(), time.Since(start).Round(time.Millisecond))
	report := func(what string, sum *Summary, d time.Duration) {
		_, moved, already, _ := tally(sum)
		m, al := 0, 0
		for st := range moved {
			m += moved[st]
			al += already[st]
		}
		lost, dup := exactlyOnce(t, src, cs, q, s)
		var table strings.Builder
		sum.Write(&table)
		t.Logf("%s: %s, moved %d, already imported %d, lost %d, duplicated %d; its ledger:\n%s", what, d.Round(time.Millisecond), m, al, lost, dup, table.String())
		if lost != 0 || dup != 0 {
			t.Errorf("%s: lost %d, duplicated %d", what, lost, dup)
		}
	}
	start = time.Now()
	sum := importOnce(t, src, cs, Options{Apply: true})
	report("first run", sum, time.Since(start))
	start = time.Now()
	sum = importOnce(t, src, cs, Options{Apply: true})
	report("second run", sum, time.Since(start))

	// Again into a fresh prefix, with a courier import process killed
	// (SIGKILL) midway, then run again.
	a2 := testkit.StartPrivate(t)
	src2 := a2.Client(t)
	s2 := seed(t, a2.Addr, q, n)
	cs2 := cs
	cs2.cfg.Prefix = testkit.Prefix(t) + "k"
	if cs2.admin, err = admin.NewClient(rdb, cs2.cfg); err != nil {
		t.Fatal(err)
	}
	if cs2.producer, err = worker.NewClient(rdb, cs2.cfg); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	killMidway(t, a2.Addr, cs2, q, s2.total()/3)
	sum = importOnce(t, src2, cs2, Options{Apply: true})
	_, moved, already, _ := tally(sum)
	m, al := 0, 0
	for st := range moved {
		m += moved[st]
		al += already[st]
	}
	lost, dup := exactlyOnce(t, src2, cs2, q, s2)
	t.Logf("kill -9 midway + rerun: %s, rerun moved %d, already imported %d, lost %d, duplicated %d", time.Since(start).Round(time.Millisecond), m, al, lost, dup)
	if lost != 0 || dup != 0 {
		t.Errorf("kill -9 midway: lost %d, duplicated %d", lost, dup)
	}
}

// TestImportAsynqFromCluster imports from asynq on a Redis Cluster of its
// own, seeded by asynq's client with asynq.RedisClusterClientOpt, through
// courier import asynq --from-cluster: every state moved, none lost or
// duplicated, and a second run moves nothing.
func TestImportAsynqFromCluster(t *testing.T) {
	t.Parallel()
	const q = "cmail"
	backends(t, q, func(t *testing.T, cs courierSide) {
		ac := testkit.StartPrivateCluster(t, 3, 0)
		src := ac.Client(t)
		s := seedWith(t, asynq.RedisClusterClientOpt{Addrs: ac.Addrs()}, q, 40)
		cmd := exec.Command(courierBinary(t), "import", "asynq", "--from-cluster", strings.Join(ac.Addrs(), ","),
			"--redis", strings.Join(cs.addrs, ","), "--prefix", cs.cfg.Prefix, "--batch", "7", "--apply")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("courier import asynq --from-cluster: %v\n%s", err, out)
		}
		for state, ids := range s.byState {
			if !regexp.MustCompile(`(?m)^` + q + ` +` + q + ` +` + state + ` +` + strconv.Itoa(len(ids)) + ` +` + strconv.Itoa(len(ids)) + ` +0 +0 `).Match(out) {
				t.Errorf("%s: want %d found and moved; output:\n%s", state, len(ids), out)
			}
		}
		if lost, dup := exactlyOnce(t, src, cs, q, s); lost != 0 || dup != 0 {
			t.Errorf("lost %d, duplicated %d", lost, dup)
		}
		checkFields(t, src, cs, q, s)

		again := importOnce(t, src, cs, Options{Apply: true})
		f2, m2, _, _ := tally(again)
		for state := range s.byState {
			if f2[state] != 0 || m2[state] != 0 {
				t.Errorf("second run, %s: found %d, moved %d", state, f2[state], m2[state])
			}
		}
	})
}

// ledgerSize is the number of entries of the asynq import ledgers of
// Courier queue q, every partition's.
func ledgerSize(t *testing.T, cs courierSide, q string) int64 {
	t.Helper()
	parts, err := cs.admin.Partitions(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for i := range parts {
		jobs := rediskeys.PartitionKeys(cs.cfg.Prefix, q, parts, i).Jobs
		c, err := cs.rdb.Do(t.Context(), cs.rdb.B().Scard().Key(strings.TrimSuffix(jobs, "jobs")+"imported:asynq").Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

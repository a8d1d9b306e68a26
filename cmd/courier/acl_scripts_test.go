package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/redisproc"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/limiter"
)

// aclScriptCases names, for every script of the catalog
// (worker/internal/script's All), the step of TestMinimalACLEveryScript
// that runs it under the ACL user of docs/security.md. A script added to the catalog
// fails that test until it has a case here, and a step that runs it.
var aclScriptCases = map[string]string{
	"enqueue":      "Client.Enqueue",
	"claim":        "the daemon claims",
	"ack":          "a job of work succeeds",
	"complete":     "a job of kept (RetainCompleted) succeeds",
	"retry":        "a job of work fails once, then succeeds",
	"snooze":       "a job of work snoozes once (worker.Snooze)",
	"extend":       "a job of work runs for three leases and reports progress",
	"cancel":       "Client.Cancel of a running job, and of a due one",
	"requeue":      "Client.Requeue of a dead job",
	"recover":      "the leader's recover loop",
	"trim":         "the leader's trims of the dead and the completed set",
	"uniq_expire":  "the leader's trim: a unique key's window",
	"history_trim": "the leader's trim: the history",
	"fire":         "a periodic schedule of work fires",
	"purge":        "Client.Purge of the dead jobs",
	"import":       "Client.Import of a dead job into parts (2 partitions: the other partition's ledger read too), twice",
	"get":          "Client.Get",
	"forget":       "Client.ForgetQueue of a queue no longer used",
	"queue_set":    "the daemon's start (each queue's record), Client.Pause and Client.Resume of parts",
	"queue_copy":   "the pause of parts (2 partitions), copied to its partition 1",
	"stats":        "Client.Stats",
	"key_conf":     "Client.SetKeyLimits of key acme of work (then its keyed jobs: claimed under a cap and a rate, retried, snoozed, held back by KeyLimited, acked)",
	"deadlist":     "Client.Dead",
	"list":         "Client.List",
	"lock_acquire": "the leader election",
	"lock_renew":   "the leader lock's watchdog",
	"lock_release": "the leaders step down at the daemon's stop",

	"limiter_acquire": "a Limiter's Acquire, and a waiter woken by the release",
	"limiter_extend":  "a Limiter's slot renewed by its watchdog and by Extend",
	"limiter_release": "a Limiter's Release",
	"limiter_take":    "a Limiter's Take",
}

// aclCommands returns the commands the ACL line of docs/security.md allows (+name,
// lower case; a subcommand as name|sub).
func aclCommands(t *testing.T) map[string]bool {
	t.Helper()
	allowed := map[string]bool{}
	for _, f := range readmeACL(t, "courier", "x") {
		if name, ok := strings.CutPrefix(f, "+"); ok {
			allowed[strings.ToLower(name)] = true
		}
	}
	return allowed
}

// TestACLAllowsEveryScriptCommand: every command a script of lua/ may call,
// in any branch, is one the ACL line of docs/security.md allows (issue 29, item 10:
// forget.lua's HLEN and UNLINK were not). The runtime test below cannot
// reach every branch; this one reads them all.
func TestACLAllowsEveryScriptCommand(t *testing.T) {
	t.Parallel()
	allowed := aclCommands(t)
	files, err := filepath.Glob("../../lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in ../../lua: %v", err)
	}
	call := regexp.MustCompile(`redis\.p?call\(\s*'([A-Za-z]+)'`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			if cmd := strings.ToLower(m[1]); !allowed[cmd] {
				t.Errorf("%s calls %s, which the ACL line of docs/security.md does not allow (+%s)", filepath.Base(f), m[1], cmd)
			}
		}
	}
}

// TestMinimalACLEveryScript runs every script of the catalog through the
// library's real calls (a Daemon and a Client in this process) as the
// minimal Redis user of docs/security.md, on a single Redis and on a Cluster: each
// script must have run (courier_redis_script_seconds), none may have
// failed (courier_redis_errors_total), and Redis must have refused nothing
// (an empty ACL LOG). aclScriptCases says which step runs which script.
func TestMinimalACLEveryScript(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Redis")
	}
	t.Run("single", func(t *testing.T) {
		t.Parallel()
		runEveryScript(t, []*testkit.Private{testkit.StartPrivate(t)})
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		runEveryScript(t, testkit.StartPrivateCluster(t, 3, 0).Nodes)
	})
}

func runEveryScript(t *testing.T, nodes []*testkit.Private) {
	prefix, password := "acl", "s3cret-"+strings.ReplaceAll(t.Name(), "/", "-")
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
		n.MustDo(t, readmeACL(t, prefix, password)...)
		n.MustDo(t, "ACL", "LOG", "RESET")
	}
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs, Username: "courier", Password: password, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)

	reg := prometheus.NewRegistry()
	cfg := worker.Config{
		Prefix: prefix, Registerer: reg, Lease: 300 * time.Millisecond, LeaderLease: 300 * time.Millisecond,
		RecoverInterval: 100 * time.Millisecond, PollInterval: 100 * time.Millisecond, ShutdownTimeout: 2 * time.Second,
		DeadMaxJobs: 1, Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	c, err := worker.NewClient(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	op, err := admin.NewClient(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := worker.NewDaemon(rdb, everyScriptRegistry(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	ran := func(script string) float64 {
		return testkit.Metric(t, reg, "courier_redis_script_seconds", "script", script)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	enq := func(spec worker.JobSpec) {
		t.Helper()
		_, err := c.Enqueue(t.Context(), spec)
		must("enqueue "+spec.ID, err)
	}
	state := func(queue, id string) worker.State {
		t.Helper()
		j, err := c.Get(t.Context(), queue, id)
		if errors.Is(err, worker.ErrNotFound) {
			return ""
		}
		must("get "+id, err)
		return j.State
	}

	for _, id := range []string{"ok", "fail-once", "snooze-once", "slow", "block", "dies"} {
		enq(worker.JobSpec{Queue: "work", ID: id, Payload: []byte(id)})
	}
	enq(worker.JobSpec{Queue: "work", ID: "unique", Payload: []byte("ok"), UniqueKey: "k", UniqueFor: 10 * time.Millisecond})
	must("key limits", op.SetKeyLimits(t.Context(), "work", "acme", admin.KeyLimits{Concurrency: 2, RateLimit: &worker.RateLimit{N: 100, Per: time.Second}}))
	for _, p := range []string{"ok", "fail-once", "snooze-once", "limit-once"} {
		enq(worker.JobSpec{Queue: "work", ID: "acme-" + p, Key: "acme", Payload: []byte(p)})
	}
	enq(worker.JobSpec{Queue: "work", ID: "acme-later", Key: "acme", Payload: []byte("ok"), Delay: 50 * time.Millisecond})
	enq(worker.JobSpec{Queue: "kept", ID: "k1"})
	enq(worker.JobSpec{Queue: "kept", ID: "k2"})
	enq(worker.JobSpec{Queue: "gone", ID: "g", Delay: time.Hour})

	testkit.EventuallyState(t, 20*time.Second, func() (bool, string) {
		s := fmt.Sprintf("block %q, dies %q", state("work", "block"), state("work", "dies"))
		return state("work", "block") == worker.StateActive && state("work", "dies") == worker.StateDead, s
	})
	must("cancel a running job", op.Cancel(t.Context(), "work", "block"))
	_, err = op.Jobs(t.Context(), admin.JobListParams{Queue: "work", State: worker.StateDead})
	must("dead list", err)
	_, err = op.Triage(t.Context(), admin.TriageParams{Queue: "work", Action: admin.TriageRequeue, IDs: []string{"dies"}})
	must("requeue", err)
	testkit.Eventually(t, 10*time.Second, "the requeued job to die again", func() bool {
		return state("work", "dies") == worker.StateDead && ran("requeue") > 0
	})
	_, err = op.Triage(t.Context(), admin.TriageParams{Queue: "work", Action: admin.TriagePurge, IDs: []string{"dies", "block"}})
	must("purge", err)
	_, err = op.Jobs(t.Context(), admin.JobListParams{Queue: "work", State: worker.StateActive})
	must("list", err)
	_, err = op.Stats(t.Context(), "work")
	must("stats", err)
	_, err = op.Keys(t.Context(), "work", 10)
	must("keys", err)
	_, err = op.Key(t.Context(), "work", "acme")
	must("key", err)
	testkit.Eventually(t, 10*time.Second, "the keyed jobs to run", func() bool {
		for _, p := range []string{"ok", "fail-once", "snooze-once", "limit-once", "later"} {
			if state("work", "acme-"+p) != "" {
				return false
			}
		}
		return true
	})
	for range 2 { // the second finds the ledger entry
		imp, err := op.Import(t.Context(), "asynq", []admin.ImportJob{{Spec: worker.JobSpec{Queue: "parts", ID: "imp", Kind: "email:deliver"},
			Source: "default/imp", Attempts: 1, LastError: "boom", DiedAt: time.Now()}})
		must("import", err)
		if imp[0].Outcome != admin.ImportAdded && imp[0].Outcome != admin.ImportAlready {
			t.Errorf("import under the ACL: %+v", imp[0])
		}
	}
	must("pause", op.Pause(t.Context(), "parts"))
	must("resume", op.Resume(t.Context(), "parts"))
	must("cancel a due job", op.Cancel(t.Context(), "gone", "g"))
	_, err = op.Jobs(t.Context(), admin.JobListParams{Queue: "gone", State: worker.StateCancelled})
	must("cancelled list", err)
	_, err = op.Triage(t.Context(), admin.TriageParams{Queue: "gone", State: worker.StateCancelled, Action: admin.TriagePurge, IDs: []string{"g"}})
	must("purge the cancelled", err)
	must("forget a queue no longer used", op.Forget(t.Context(), "gone"))
	limiterSteps(t, rdb, prefix, reg)

	testkit.EventuallyState(t, 20*time.Second, func() (bool, string) {
		var missing []string
		for name := range aclScriptCases {
			if name != "lock_release" && ran(name) == 0 {
				missing = append(missing, name)
			}
		}
		slices.Sort(missing)
		return len(missing) == 0, fmt.Sprintf("scripts not run yet: %v", missing)
	})
	stop()
	must("Daemon.Run", <-done)

	catalog := scriptsOf(testkit.Series(t, reg))
	if len(catalog) < 20 {
		t.Fatalf("the catalog as the metrics name it: %v; want every script", catalog)
	}
	for _, name := range catalog {
		step, ok := aclScriptCases[name]
		switch {
		case !ok:
			t.Errorf("script %s of the catalog has no case in aclScriptCases: add one, and a step that runs it", name)
		case ran(name) == 0:
			t.Errorf("script %s never ran (its step: %s)", name, step)
		}
		if n := testkit.Metric(t, reg, "courier_redis_errors_total", "op", name); n > 0 {
			t.Errorf("script %s failed %v time(s) as the ACL user of docs/security.md", name, n)
		}
	}
	for name := range aclScriptCases {
		if !slices.Contains(catalog, name) {
			t.Errorf("aclScriptCases names %s, which is not in the catalog", name)
		}
	}
	for _, n := range nodes {
		entries, err := redisproc.Command(t.Context(), n.Addr, "ACL", "LOG")
		if err != nil {
			t.Fatal(err)
		}
		if list, _ := entries.([]any); len(list) > 0 {
			t.Errorf("Redis at %s refused the ACL user of docs/security.md %d time(s): %v", n.Addr, len(list), list)
		}
	}
}

// limiterSteps runs the limiter scripts as TestMinimalACLEveryScript's
// user: a slot renewed by the watchdog and by Extend, a waiter on the
// free channel (SSUBSCRIBE) woken by the Release, and a Take.
func limiterSteps(t *testing.T, rdb rueidis.Client, prefix string, reg *prometheus.Registry) {
	t.Helper()
	lim, err := limiter.New(rdb, limiter.Options{Prefix: prefix, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	const lease = 300 * time.Millisecond
	slot, err := lim.Acquire(t.Context(), "geocoder", 1, lease)
	if err != nil {
		t.Fatalf("limiter Acquire: %v", err)
	}
	testkit.Eventually(t, 10*time.Second, "the watchdog's renewal", func() bool {
		return testkit.Metric(t, reg, "courier_redis_script_seconds", "script", "limiter_extend") > 0
	})
	if err := slot.Extend(t.Context(), time.Minute); err != nil {
		t.Fatalf("limiter Extend: %v", err)
	}
	woken := make(chan error, 1)
	go func() {
		s, err := lim.Acquire(t.Context(), "geocoder", 1, lease)
		if err == nil {
			err = s.Release(t.Context())
		}
		woken <- err
	}()
	testkit.Eventually(t, 10*time.Second, "the waiter's attempt", func() bool {
		return testkit.Metric(t, reg, "courier_redis_script_seconds", "script", "limiter_acquire") >= 2
	})
	if err := slot.Release(t.Context()); err != nil {
		t.Fatalf("limiter Release: %v", err)
	}
	select {
	case err := <-woken:
		if err != nil {
			t.Fatalf("limiter waiter: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the limiter's waiter was not woken by the release (its slot's lease was a minute)")
	}
	if ok, _, err := lim.Take(t.Context(), "geocoder", 10, time.Second); !ok || err != nil {
		t.Fatalf("limiter Take: %v, %v", ok, err)
	}
}

// scriptsOf returns the scripts the series of courier_redis_script_seconds
// name: the whole catalog, whose series the store creates at zero.
func scriptsOf(series map[string]float64) []string {
	var names []string
	for key := range series {
		if name, ok := strings.CutPrefix(key, `courier_redis_script_seconds_count{script="`); ok {
			names = append(names, strings.TrimSuffix(name, `"}`))
		}
	}
	slices.Sort(names)
	return names
}

// everyScriptRegistry is the handlers of TestMinimalACLEveryScript: work's
// jobs act out their id (succeed, fail once, snooze once, run long while
// reporting progress, block until cancelled, die); kept retains one
// completed job; work fires a periodic job every second; parts has two
// partitions.
func everyScriptRegistry(t *testing.T) *worker.Registry {
	var once sync.Map // ids that already failed or snoozed
	work := func(ctx context.Context, job *worker.Job) error {
		switch string(job.Payload) {
		case "fail-once":
			if _, again := once.LoadOrStore(job.ID, true); !again {
				return errors.New("the first attempt fails")
			}
		case "snooze-once":
			if _, again := once.LoadOrStore(job.ID, true); !again {
				return worker.Snooze(10 * time.Millisecond)
			}
		case "slow":
			if err := job.ReportProgress(50, "half"); err != nil {
				return err
			}
			select {
			case <-time.After(time.Second): // three leases: renewed meanwhile
			case <-ctx.Done():
				return ctx.Err()
			}
		case "block":
			<-ctx.Done()
			return ctx.Err()
		case "dies":
			return worker.Permanent(errors.New("no use trying again"))
		case "limit-once":
			if _, again := once.LoadOrStore(job.ID, true); !again {
				return worker.KeyLimited(10 * time.Millisecond)
			}
		}
		return nil
	}
	reg := worker.NewRegistry()
	for _, q := range []struct {
		name string
		opts worker.QueueOptions
	}{
		{"work", worker.QueueOptions{MaxAttempts: 3, Backoff: worker.FixedSteps{10 * time.Millisecond}, KeyConcurrency: 2,
			Periodic: []worker.Periodic{{Name: "tick", Every: time.Second, Payload: []byte("ok")}}}},
		{"kept", worker.QueueOptions{RetainCompleted: worker.Retention{Count: 1}}},
		{"parts", worker.QueueOptions{Partitions: 2}},
	} {
		if err := reg.Register(q.name, worker.HandlerFunc(work), q.opts); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

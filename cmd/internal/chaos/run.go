package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Options configure a run.
type Options struct {
	// Short runs the scenarios marked Short with ShortPlan (CI); otherwise
	// every scenario with FullPlan.
	Short bool
	// Only, when set, runs these scenarios by name (the others get a "not
	// run" row).
	Only []string
	// AllowKnown lets a scenario marked Known fail without failing the run.
	AllowKnown bool
	// Courier is a courier binary to run; "" builds one from the module.
	Courier string
	// Dir keeps every scenario's logs and data; "" uses a temporary
	// directory, removed unless a scenario failed.
	Dir string
	// Load and Rate, when set, override the plan's.
	Load time.Duration
	Rate int
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Run runs the scenarios one after another and returns the report; an
// error means the suite could not start at all.
func Run(ctx context.Context, opt Options) (Report, error) {
	start := time.Now()
	rep := Report{Mode: "full"}
	plan := FullPlan
	if opt.Short {
		rep.Mode, plan = "short", ShortPlan
	}
	if opt.Load > 0 {
		plan.Load = opt.Load
	}
	if opt.Rate > 0 {
		plan.Rate = opt.Rate
	}
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(logw, "chaos %s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
	scenarios := Scenarios()
	for _, name := range opt.Only {
		if !slices.ContainsFunc(scenarios, func(s *Scenario) bool { return s.Name == name }) {
			return rep, fmt.Errorf("no scenario %q (have %s)", name, scenarioNames(scenarios))
		}
	}
	for _, tool := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(tool); err != nil {
			return rep, fmt.Errorf("the chaos suite needs %s on PATH (Debian: apt-get install redis-server redis-tools): %w", tool, err)
		}
	}
	dir, keep := opt.Dir, opt.Dir != ""
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "courier-chaos-"); err != nil {
			return rep, err
		}
	}
	bin := opt.Courier
	if bin == "" {
		logf("building courier")
		var err error
		if bin, err = BuildCourier(ctx, dir); err != nil {
			return rep, err
		}
	}
	for _, sc := range scenarios {
		r := newResult(sc, false)
		switch {
		case len(opt.Only) > 0 && !slices.Contains(opt.Only, sc.Name):
			r.Error = "not selected"
		case len(opt.Only) == 0 && opt.Short && !sc.Short:
			r.Error = "full run only"
		default:
			r = runScenario(ctx, sc, plan, bin, filepath.Join(dir, sc.Name), logf)
		}
		r.judge(opt.AllowKnown)
		logf("%s: %s", sc.Name, r.Verdict)
		rep.Results = append(rep.Results, r)
		if r.Failed() {
			rep.Failed, keep = true, true
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	rep.Elapsed = time.Since(start)
	if keep {
		logf("logs and data kept in %s", dir)
	} else {
		_ = os.RemoveAll(dir)
	}
	return rep, nil
}

// runScenario runs one scenario: its world, the producer for plan.Load,
// the fault's episodes from plan.Warmup to plan.Load-plan.Cooldown, the
// drain, the tally.
func runScenario(ctx context.Context, sc *Scenario, plan Plan, bin, dir string, logf func(string, ...any)) (r Result) {
	start := time.Now()
	r = newResult(sc, true)
	defer func() { r.Elapsed = time.Since(start) }()
	logf("%s: starting (%s)", sc.Name, sc.Fault)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Error = err.Error()
		return r
	}
	l := NewLedger(start)
	w, err := newWorld(ctx, sc, bin, dir, l, logf)
	if err != nil {
		r.Error = "set up: " + err.Error()
		return r
	}
	defer w.close()

	var meter *workMeter
	var shards []shard
	stopMeter := func() {}
	if sc.Promise.Spread && w.cluster != nil {
		if shards, err = w.cluster.shards(ctx); err != nil {
			r.Error = "set up: " + err.Error()
			return r
		}
		meter, stopMeter = startWorkMeter(ctx, w.cluster)
	}

	loadStart := time.Now()
	loadCtx, stopLoad := context.WithDeadline(ctx, loadStart.Add(plan.Load))
	defer stopLoad()
	prod := newProducer(w.client, queueName, l, plan.Rate, sc.Durability, uint64(len(sc.Name)))
	prod.keyed = sc.KeyCap > 0
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		prod.Run(loadCtx, ctx)
	}()

	faultCtx, stopFaults := context.WithDeadline(ctx, loadStart.Add(plan.Load-plan.Cooldown))
	defer stopFaults()
	var injectErr error
	if pause(faultCtx, plan.Warmup) {
		logf("%s: injecting faults", sc.Name)
		injectErr = sc.Inject(faultCtx, w, plan)
	}
	<-produced
	logf("%s: load over (%d enqueued); draining", sc.Name, l.Enqueued())
	w.drain(ctx, plan.Drain)
	stopMeter()
	dead, states, err := w.lookUpLost(ctx)
	r.Tally = l.Tally(dead, states)
	if sc.KeyCap > 0 {
		r.CapViolations, r.KeyPeak = l.CapViolations(), l.KeyPeak()
		var lerr error
		if r.LeakedSlots, lerr = w.leakedSlots(ctx, 10*time.Second); lerr != nil && err == nil {
			err = lerr
		}
	}
	if meter != nil {
		r.Spread = meter.shares(shards, w.slots, l.DeliveredIDs())
		if f, ferr := os.Create(filepath.Join(dir, "work.json")); ferr == nil {
			_, _ = meter.WriteTo(f)
			f.Close()
		}
	}
	if f, ferr := os.Create(filepath.Join(dir, "ledger.json")); ferr == nil {
		_, _ = l.WriteTo(f)
		f.Close()
	}
	var problems []string
	if injectErr != nil {
		problems = append(problems, "inject: "+injectErr.Error())
	}
	if err != nil {
		problems = append(problems, err.Error())
	}
	r.Error = strings.Join(problems, "; ")
	return r
}

// newResult is sc's result before any figure: ran says whether sc runs.
func newResult(sc *Scenario, ran bool) Result {
	return Result{Scenario: sc.Name, Fault: sc.Fault, promise: sc.Promise, Known: sc.Known, ran: ran}
}

func scenarioNames(ss []*Scenario) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

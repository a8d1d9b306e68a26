package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// The keys mode measures job keys (worker.JobSpec.Key) in four phases, each
// on a queue of its own, so that what one phase leaves waiting never meets
// the next:
//
//	ratio     --ratio-n jobs without a key, then as many spread over --keys
//	          keys (no cap): jobs/s processed each, their ratio, and the
//	          memory a key and a keyed job take (keysratio.go)
//	share     --share-keys keys with deep backlogs, equal weights, then
//	          --weights given in turn (keysshare.go): the worst deviation
//	          of a key's share of the starts from its weight's
//	tenants   --backlog jobs of one key ("whale") and --keys other keys
//	          with --per-key jobs each, a cap of --key-cap per key; a
//	          probe (a one-job new key) every --every: enqueue to start,
//	          starts above a cap, slots still held after a graceful stop
//	          (keystenants.go)
//
// Every phase runs keysFleet daemons of --concurrency handlers each, as
// that many processes would.
var keysQueues = []string{queue, tenantsQueue, shareQueue, weightedQueue}

const (
	tenantsQueue  = "bench-tenants"
	shareQueue    = "bench-share"
	weightedQueue = "bench-weighted"
	// keysFleet is how many daemons each phase of the keys mode runs.
	keysFleet = 2
)

// keysMode runs the phases of the keys mode that --phases names and prints
// their figures on one line: the targets first, then each phase's details.
func (b *bench) keysMode(ctx context.Context) (string, error) {
	o := b.opts
	masters, closeMasters, err := findMasters(ctx, b.rdb, o.addr)
	if err != nil {
		return "", err
	}
	defer closeMasters()
	phases, _ := o.keys.phaseList() // checked by problems
	head := map[string]string{}
	var details strings.Builder
	if slices.Contains(phases, "ratio") {
		ratio, err := b.keysRatio(ctx, masters)
		if err != nil {
			return "", fmt.Errorf("throughput ratio: %w", err)
		}
		head["throughput_ratio"] = fmt.Sprintf("%.3f", ratio.ratio())
		head["bytes_per_key"] = fmt.Sprintf("%.0f", ratio.bytesPerKey)
		details.WriteString(ratio.figures(o))
	}
	if slices.Contains(phases, "share") {
		equal, err := b.keysShare(ctx, shareQueue, nil)
		if err != nil {
			return "", fmt.Errorf("fair share, equal weights: %w", err)
		}
		weights, _ := o.keys.weightList() // checked by problems
		weighted, err := b.keysShare(ctx, weightedQueue, weights)
		if err != nil {
			return "", fmt.Errorf("fair share, weights %s: %w", o.keys.weights, err)
		}
		head["share_dev_pct"] = fmt.Sprintf("%.1f", equal.devPct)
		head["share_dev_weighted_pct"] = fmt.Sprintf("%.1f", weighted.devPct)
		details.WriteString(equal.figures("share") + weighted.figures("share_weighted") + " weights=" + o.keys.weights)
	}
	if slices.Contains(phases, "tenants") {
		ten, err := b.keysTenants(ctx)
		if err != nil {
			return "", fmt.Errorf("tenants: %w", err)
		}
		head["tenant_p99_ms"] = ms(ten.p99)
		head["cap_violations"] = strconv.FormatInt(ten.violations, 10)
		head["leaked_slots"] = strconv.FormatInt(ten.leaked, 10)
		details.WriteString(ten.figures(o))
	}
	line := "mode=keys"
	for _, k := range keysHeadline {
		if v, ok := head[k]; ok {
			line += " " + k + "=" + v
		}
	}
	line += details.String() + fmt.Sprintf(" phases=%s daemons=%d concurrency=%d partitions=%d", strings.Join(phases, ","), keysFleet, o.concurrency, o.partitions)
	if len(masters) > 1 {
		line += fmt.Sprintf(" masters=%d", len(masters))
	}
	return line, nil
}

// keysHeadline are the figures the keys mode has targets for, in the order
// it prints them first.
var keysHeadline = []string{"tenant_p99_ms", "share_dev_pct", "share_dev_weighted_pct", "cap_violations", "leaked_slots", "throughput_ratio", "bytes_per_key"}

// startFleet runs keysFleet daemons of h on queue q and returns once each
// serves it; the returned stop function stops them all at once, as a
// fleet's shutdown would, and waits for each to drain.
func (b *bench) startFleet(ctx context.Context, q string, opts worker.QueueOptions, h worker.Handler) (stop func() error, err error) {
	var fleet []*benchDaemon
	stopAll := func() error {
		errs := make([]error, len(fleet))
		var wg sync.WaitGroup
		for i, d := range fleet {
			wg.Go(func() { errs[i] = d.stop() })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	for i := range keysFleet {
		reg := worker.NewRegistry()
		if err := reg.Register(q, h, opts); err != nil {
			return nil, errors.Join(err, stopAll())
		}
		d, err := b.runDaemon(ctx, i, reg)
		if err != nil {
			return nil, errors.Join(err, stopAll())
		}
		fleet = append(fleet, d)
	}
	// A daemon stopped while it starts fails its Run: a phase that ends
	// sooner than the fleet starts would fail so.
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for _, d := range fleet {
		for !d.Running() {
			select {
			case <-d.done:
				return nil, errors.Join(errors.New("a daemon of the fleet stopped as it started"), stopAll())
			case <-waitCtx.Done():
				return nil, errors.Join(fmt.Errorf("wait for the fleet to start: %w", waitCtx.Err()), stopAll())
			case <-tick.C:
			}
		}
	}
	return sync.OnceValue(stopAll), nil
}

// keyOptions are the options of a keys mode queue: the run's concurrency
// and partitions, and a cap per key (0 = none).
func (b *bench) keyOptions(keyCap int) worker.QueueOptions {
	return worker.QueueOptions{Concurrency: b.opts.concurrency, Partitions: b.opts.partitions, KeyConcurrency: keyCap}
}

// keyRuns counts, per job key, the handlers running and started, across
// the fleet: the bench's own view of the caps.
type keyRuns struct {
	limit      int64    // the cap per key; 0 = none
	counts     sync.Map // key → *keyRun
	violations atomic.Int64
}

// keyRun is one key's counts.
type keyRun struct{ running, started, peak atomic.Int64 }

// begin counts a start of a job of key and returns the key's counts and
// its starts so far. A start that finds the key's cap already used counts
// as a violation: the handler's count of a key's running jobs never
// exceeds the slots Redis holds for it, since a handler returns before its
// job's ack gives its slot back.
func (k *keyRuns) begin(key string) (*keyRun, int64) {
	v, ok := k.counts.Load(key)
	if !ok {
		v, _ = k.counts.LoadOrStore(key, new(keyRun))
	}
	r := v.(*keyRun)
	n := r.running.Add(1)
	if k.limit > 0 && n > k.limit {
		k.violations.Add(1)
	}
	for p := r.peak.Load(); n > p && !r.peak.CompareAndSwap(p, n); p = r.peak.Load() {
	}
	return r, r.started.Add(1)
}

// end counts the end of a job begin counted.
func (r *keyRun) end() { r.running.Add(-1) }

// of returns key's counts; zero counts for a key none of whose jobs
// started.
func (k *keyRuns) of(key string) *keyRun {
	if v, ok := k.counts.Load(key); ok {
		return v.(*keyRun)
	}
	return new(keyRun)
}

// running sums the handlers still running, over every key.
func (k *keyRuns) running() int64 {
	var n int64
	k.counts.Range(func(_, v any) bool {
		n += v.(*keyRun).running.Load()
		return true
	})
	return n
}

// heldSlots sums the slots q's keys hold in Redis, over its partitions:
// the "r:<key>" fields of each partition's key state hash
// (rediskeys.Queue.KeyState), each the number of the key's jobs in active.
func (b *bench) heldSlots(ctx context.Context, q string) (int64, error) {
	var n int64
	for i := range b.opts.partitions {
		key := rediskeys.PartitionKeys(b.prefix, q, b.opts.partitions, i).KeyState
		st, err := b.rdb.Do(ctx, b.rdb.B().Hgetall().Key(key).Build()).AsStrMap()
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", key, err)
		}
		for f, v := range st {
			if strings.HasPrefix(f, "r:") {
				c, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("%s: field %s holds %q, not a count", key, f, v)
				}
				n += c
			}
		}
	}
	return n, nil
}

// enqueueEach enqueues n jobs, spec(i) the i-th, in batches of 10,000.
func enqueueEach(ctx context.Context, c *worker.Client, n int, spec func(i int) worker.JobSpec) error {
	const chunk = 10000
	specs := make([]worker.JobSpec, 0, chunk)
	for done := 0; done < n; done += len(specs) {
		specs = specs[:0]
		for i := range min(chunk, n-done) {
			specs = append(specs, spec(done+i))
		}
		if _, err := c.EnqueueMany(ctx, specs); err != nil {
			return err
		}
	}
	return nil
}

// keyNames returns n distinct key names, prefix and 16 random hex digits
// each: names of one phase sort in no particular order, as real keys would,
// so that no key gains by its name where the claim's order ties.
func keyNames(prefix string, n int) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		k := prefix + randomHex(8)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// whaleKey is the key of the tenants phase's backlog.
const whaleKey = "whale"

// probeMark opens a probe's payload; the enqueue time (UnixNano) follows.
var probeMark = []byte("probe")

// tenantFigures are the tenants phase's.
type tenantFigures struct {
	p50, p90, p99, max time.Duration // enqueue to start of the probes
	violations         int64         // starts that found their key's cap used
	leaked             int64         // slots held in Redis after the fleet stopped
	whalePeak          int64         // the whale's jobs seen running at once
	whaleStarted       int64
	activeLeft         int64   // active keys that still had jobs when the last probe started
	backlogPerS        float64 // the whale's backlog enqueued, jobs/s
	probingPerS        float64 // jobs started per second while the probes were sent
}

func (f tenantFigures) figures(o options) string {
	return fmt.Sprintf(" tenant_p50_ms=%s tenant_p90_ms=%s tenant_max_ms=%s probes=%d every=%s keys=%d per_key=%d keys_active_at_end=%d"+
		" backlog=%d backlog_enqueue_per_s=%.0f key_cap=%d whale_peak=%d whale_started=%d work=%s probing_starts_per_s=%.0f",
		ms(f.p50), ms(f.p90), ms(f.max), o.n, o.every, o.keys.active, o.keys.perKey, f.activeLeft,
		o.backlog, f.backlogPerS, o.keys.capPerKey, f.whalePeak, f.whaleStarted, o.work, f.probingPerS)
}

// keysTenants runs the tenants phase on its queue, with a cap of --key-cap
// per key: --backlog jobs of the whale's key, then --per-key jobs of each
// of --keys active keys, in turns; the fleet starts on them (each handler
// takes --work), and after half a second a probe, a job of a key never
// seen before, is enqueued every --every, --n of them. Every start is
// counted per key against the cap. Once each probe has started, the fleet
// is stopped gracefully (running jobs end or are handed back) and the
// slots the keys still hold in Redis are summed: none should be left.
func (b *bench) keysTenants(ctx context.Context) (tenantFigures, error) {
	o := b.opts
	k := o.keys
	var f tenantFigures
	producer, op, err := b.clients()
	if err != nil {
		return f, err
	}
	// The whale's share of the starts is more than its cap would let it
	// run, so that the cap, not the share, holds it.
	if err := op.SetKeyLimits(ctx, tenantsQueue, whaleKey, admin.KeyLimits{Concurrency: -1, Weight: admin.MaxKeyWeight}); err != nil {
		return f, err
	}
	payload := b.payload()
	start := time.Now()
	if err := enqueueEach(ctx, producer, o.backlog, func(int) worker.JobSpec {
		return worker.JobSpec{Queue: tenantsQueue, Key: whaleKey, Payload: payload}
	}); err != nil {
		return f, fmt.Errorf("enqueue the backlog: %w", err)
	}
	f.backlogPerS = float64(o.backlog) / time.Since(start).Seconds()
	names := keyNames("k", k.active)
	if err := enqueueEach(ctx, producer, k.active*k.perKey, func(i int) worker.JobSpec {
		return worker.JobSpec{Queue: tenantsQueue, Key: names[i%k.active], Payload: payload}
	}); err != nil {
		return f, fmt.Errorf("enqueue the active keys' jobs: %w", err)
	}

	runs := &keyRuns{limit: int64(k.capPerKey)}
	rec := newLagRecorder(o.n)
	var started, exhausted atomic.Int64
	stop, err := b.startFleet(ctx, tenantsQueue, b.keyOptions(k.capPerKey), worker.HandlerFunc(func(ctx context.Context, j *worker.Job) error {
		now := time.Now()
		started.Add(1)
		r, n := runs.begin(j.Key)
		defer r.end()
		if sent, ok := probeSent(j.Payload); ok {
			rec.add(now.Sub(time.Unix(0, sent)))
			return nil
		}
		if j.Key != whaleKey && n == int64(k.perKey) {
			exhausted.Add(1)
		}
		return waitOrDone(ctx, o.work)
	}))
	if err != nil {
		return f, err
	}
	defer func() { _ = stop() }()
	// Claims reach their steady state: every key has been visited.
	if !sleep(ctx, 500*time.Millisecond) {
		return f, ctx.Err()
	}
	before, probing := started.Load(), time.Now()
	if err := b.sendProbes(ctx, producer); err != nil {
		return f, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lags := rec.wait(waitCtx)
	f.probingPerS = float64(started.Load()-before) / time.Since(probing).Seconds()
	f.activeLeft = int64(k.active) - exhausted.Load()
	if err := stop(); err != nil {
		return f, err
	}
	if len(lags) < o.n {
		return f, fmt.Errorf("%w: %d of %d probes started", errIncomplete, len(lags), o.n)
	}
	if n := runs.running(); n != 0 {
		return f, fmt.Errorf("%d handlers still counted as running after the fleet stopped", n)
	}
	if f.leaked, err = b.heldSlots(ctx, tenantsQueue); err != nil {
		return f, err
	}
	if f.activeLeft < int64(k.active)*9/10 {
		return f, fmt.Errorf("only %d of the %d active keys still had jobs at the last probe: raise --per-key", f.activeLeft, k.active)
	}
	whale := runs.of(whaleKey)
	f.whalePeak, f.whaleStarted = whale.peak.Load(), whale.started.Load()
	f.violations = runs.violations.Load()
	f.p50, f.p90, f.p99, f.max = percentile(lags, 50), percentile(lags, 90), percentile(lags, 99), lags[len(lags)-1]
	return f, nil
}

// sendProbes enqueues a probe every --every, --n of them: a job of a key
// never seen before whose payload carries the time it was sent.
func (b *bench) sendProbes(ctx context.Context, producer *worker.Client) error {
	tick := time.NewTicker(b.opts.every)
	defer tick.Stop()
	for range b.opts.n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		p := binary.BigEndian.AppendUint64(bytes.Clone(probeMark), uint64(time.Now().UnixNano()))
		if _, err := producer.Enqueue(ctx, worker.JobSpec{Queue: tenantsQueue, Key: keyNames("k", 1)[0], Payload: p}); err != nil {
			return fmt.Errorf("enqueue a probe: %w", err)
		}
	}
	return nil
}

// probeSent reports whether p is a probe's payload, and when it was sent
// (UnixNano).
func probeSent(p []byte) (int64, bool) {
	if len(p) != len(probeMark)+8 || !bytes.HasPrefix(p, probeMark) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(p[len(probeMark):])), true // #nosec G115 -- a UnixNano this bench wrote itself
}

package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// newProcessID returns "<host>-<pid>-<8 random hex digits>": readable, and
// unique among processes. It contains no ':' (it is a lock client id).
func newProcessID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	host = strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, host)
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// servedKinds is what a queue with handler h serves: the kinds of a Kinds,
// sorted; nil for one handler, which serves every kind.
func servedKinds(h Handler) []string {
	if k, ok := h.(Kinds); ok {
		return slices.Sorted(maps.Keys(k))
	}
	return nil
}

// reportLoop reports the Daemon to the fleet of each of its queues until
// ctx ends, then withdraws it.
func (d *Daemon) reportLoop(ctx context.Context) {
	started := time.Now() // StartedAt: Run starts this loop once set up, a moment after it began
	members := make([]store.Member, 0, len(d.queues))
	retain := make([]time.Duration, 0, len(d.queues))
	for _, name := range d.queues {
		reg, _ := d.reg.lookup(name)
		members = append(members, store.Member{
			ID: d.id, Concurrency: reg.opts.Concurrency,
			RateN: reg.opts.RateLimit.N, RatePerMs: reg.opts.RateLimit.Per.Milliseconds(),
			Version: d.cfg.Version, Started: started, Periodic: reportSchedules(reg.opts.Periodic),
			Kinds: servedKinds(reg.handler),
		})
		retain = append(retain, reg.opts.IDRetention)
	}
	// The queue's id retention lives in its record in Redis, in every
	// partition, where every producer's enqueue reads it: a process that
	// has one writes it with each report (so a restarted Redis gets it
	// back, and a partition that missed it gets it); one without removes
	// it once, at start.
	first := true
	report := func() {
		for i, name := range d.queues {
			members[i].Reported = time.Now()
			if err := d.st.Report(ctx, name, members[i], core.FleetTTL); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("fleet report failed; will retry", "queue", name, "err", err)
			}
			// What it serves outlives the report: enqueues to a queue or
			// kind no daemon ever served warn (admin.Client.Enqueue).
			if err := d.st.RecordServed(ctx, name, members[i].Kinds); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("record the kinds served failed; will retry", "queue", name, "err", err)
			}
			if retain[i] > 0 || first {
				if err := d.layer.SetIDRetention(ctx, name, retain[i]); err != nil && ctx.Err() == nil {
					d.cfg.Logger.Warn("store the queue's id retention failed; will retry", "queue", name, "err", err)
				}
			}
		}
		first = false
	}
	report()
	t := time.NewTicker(core.FleetReportInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			report()
		case <-ctx.Done():
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			for _, name := range d.queues {
				if err := d.st.Withdraw(wctx, name, d.id); err != nil {
					d.cfg.Logger.Warn("fleet withdraw failed; the report lapses by itself", "queue", name, "err", err)
				}
			}
			return
		}
	}
}

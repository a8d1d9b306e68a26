package worker

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// prefixesShown is how many live prefixes a log line names.
const prefixesShown = 5

// Producers and daemons must agree on Config.Prefix: a job enqueued under
// one prefix is invisible to daemons on another, and nothing fails, it just
// never runs. So daemons say where they are, in one place every process can
// read whatever its prefix, rediskeys.PrefixesKey:
//
//   - The key is a zset: member = a prefix, score = the Redis clock (ms) of
//     the last report of a daemon on it. One member per prefix, not per
//     daemon.
//   - Every running Daemon reports its prefix at its start and every
//     fleet report interval (10s), and removes in the same pipeline the
//     members not reported within three intervals (core.FleetTTL): the key
//     holds only the prefixes of live daemons and of daemons stopped less
//     than that ago, a few members. A stopping daemon removes nothing
//     (another may share its prefix): its prefix lapses.
//   - admin.Client.CheckPrefix reads the members reported within FleetTTL.
//   - At its start, a Daemon that finds no other daemon on its prefix and
//     no job in its queues, while daemons run on other prefixes, says so
//     in its log (checkPlacement); it never reads another prefix's keys.
//
// Times are the Redis clock's, so hosts with skewed clocks agree. On a
// Redis Cluster it is one key in one slot. A Redis user restricted to its
// prefix's keys (an ACL with ~<prefix>:*) needs this key as well
// (~courier:prefixes, with TIME, ZADD, ZRANGEBYSCORE and ZREMRANGEBYSCORE):
// without it a Daemon logs one warning, stops reporting and runs on, and
// CheckPrefix returns Redis' NOPERM error.
//
// prefixLoop reports the Daemon's prefix to rediskeys.PrefixesKey every
// FleetReportInterval until ctx ends; after the first report it checks
// that the Daemon is not on the wrong prefix (checkPlacement). When the
// Redis user may not write the key (its ACL), it warns once and stops:
// every refusal would be one more entry in Redis' ACL LOG.
func (d *Daemon) prefixLoop(ctx context.Context) {
	failing := false
	report := func() (live []string, ok bool) {
		live, err := d.st.ReportPrefix(ctx, core.FleetTTL)
		switch {
		case errors.Is(err, store.ErrDenied):
			d.cfg.Logger.Warn("the Redis user may not write "+store.PrefixesKey+"; this daemon does not record its key prefix, so admin.Client.CheckPrefix cannot see it (grant it ~"+store.PrefixesKey+" and +zremrangebyscore)",
				"prefix", d.cfg.Prefix, "err", err)
			return nil, false
		case err != nil && ctx.Err() == nil && !failing:
			d.cfg.Logger.Warn("record the key prefix failed (admin.Client.CheckPrefix will not see this daemon); will retry",
				"key", store.PrefixesKey, "prefix", d.cfg.Prefix, "err", err)
			failing = true
		case err == nil && failing:
			d.cfg.Logger.Info("recorded the key prefix again", "key", store.PrefixesKey, "prefix", d.cfg.Prefix)
			failing = false
		}
		return live, true
	}
	live, ok := report()
	if !ok {
		return
	}
	if !failing {
		d.checkPlacement(ctx, live)
	}
	t := time.NewTicker(core.FleetReportInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if _, ok := report(); !ok {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// checkPlacement tells, once at start, when the Daemon may run on the
// wrong prefix: no other daemon runs on its prefix (live, read before its
// own report), its queues hold no job, and daemons run on other prefixes.
// It reads no key of another prefix: a Redis user limited to its own
// prefix may not, and a refusal would fill Redis' ACL LOG. It logs at info
// level, since prefixes of their own are how separate applications share
// one Redis; admin.Client.CheckPrefix is the producer's side of the check.
func (d *Daemon) checkPlacement(ctx context.Context, live []string) {
	others := slices.DeleteFunc(slices.Clone(live), func(p string) bool { return p == d.cfg.Prefix })
	if len(others) == 0 || len(others) < len(live) || !queuesEmpty(ctx, d.st, d.queues) {
		return
	}
	d.cfg.Logger.Info("this daemon is the first on its key prefix, and other daemons run on other prefixes: producers must use this daemon's prefix (redis.prefix) for their jobs to reach it",
		"prefix", d.cfg.Prefix, "other_prefixes", others[:min(len(others), prefixesShown)])
}

// queuesEmpty reports whether every queue of queues holds no job in any
// state; false when that cannot be read.
func queuesEmpty(ctx context.Context, st *store.Store, queues []string) bool {
	for _, q := range queues {
		s, err := st.Stats(ctx, q)
		if err != nil || s.Scheduled+s.Ready+s.Active+s.Dead > 0 {
			return false
		}
	}
	return true
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// PrefixesKey is the Redis key where daemons record the key prefixes they
// run on, so that producers can check theirs (Client.CheckPrefix): the one
// key Courier writes outside Config.Prefix.
//
// Producers and daemons must agree on Config.Prefix: a job enqueued under
// one prefix is invisible to daemons on another, and nothing fails, it just
// never runs. So daemons say where they are, in one place every process can
// read whatever its prefix:
//
//   - The key is a zset: member = a prefix, score = the Redis clock (ms) of
//     the last report of a daemon on it. One member per prefix, not per
//     daemon.
//   - Every running Daemon reports its prefix at its start and every
//     FleetReportInterval, and removes in the same pipeline the members not
//     reported within FleetTTL (three intervals): the key holds only the
//     prefixes of live daemons and of daemons stopped less than FleetTTL
//     ago, a few members. A stopping daemon removes nothing (another may
//     share its prefix): its prefix lapses.
//   - Client.CheckPrefix reads the members reported within FleetTTL.
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
const PrefixesKey = "courier:prefixes"

// ErrNoDaemon is the error of Client.CheckPrefix when no daemon reported
// its key prefix within FleetTTL, on any prefix.
var ErrNoDaemon = errors.New("no live courier daemon")

// PrefixError reports that daemons run, but none on the Client's key
// prefix (Client.CheckPrefix): jobs it enqueues would never run.
type PrefixError struct {
	Prefix string   // the Client's prefix (Config.Prefix)
	Live   []string // the prefixes live daemons use, sorted
}

// prefixesShown is how many live prefixes PrefixError's message names.
const prefixesShown = 5

// Error implements error.
func (e *PrefixError) Error() string {
	shown := e.Live[:min(len(e.Live), prefixesShown)]
	quoted := make([]string, len(shown))
	for i, p := range shown {
		quoted[i] = strconv.Quote(p)
	}
	more := ""
	if n := len(e.Live) - len(shown); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("no courier daemon uses key prefix %q; daemons run on %s%s", e.Prefix, strings.Join(quoted, ", "), more)
}

// CheckPrefix checks that a live Daemon runs on c's key prefix
// (Config.Prefix), so that the jobs c enqueues will be run. It returns nil
// when one reported within FleetTTL; a *PrefixError listing the prefixes
// in use when daemons run only on others; an error wrapping ErrNoDaemon
// when no daemon reported at all; or the Redis error when Redis cannot be
// read (unreachable, or an ACL without PrefixesKey), which says nothing
// about the daemons.
//
// A daemon is seen from its start, and still up to FleetTTL after it
// stopped. It does not check that a daemon serves a given queue: see
// Client.Fleet for that.
func (c *Client) CheckPrefix(ctx context.Context) error {
	live, err := c.st.LivePrefixes(ctx, FleetTTL)
	switch {
	case err != nil:
		return fmt.Errorf("check key prefix %q: %w", c.cfg.Prefix, err)
	case slices.Contains(live, c.cfg.Prefix):
		return nil
	case len(live) == 0:
		return fmt.Errorf("check key prefix %q: %w reported within %s", c.cfg.Prefix, ErrNoDaemon, FleetTTL)
	}
	return &PrefixError{Prefix: c.cfg.Prefix, Live: live}
}

// prefixLoop reports the Daemon's prefix to PrefixesKey every
// FleetReportInterval until ctx ends; after the first report it checks
// that the Daemon is not on the wrong prefix (checkPlacement). When the
// Redis user may not write the key (its ACL), it warns once and stops:
// every refusal would be one more entry in Redis' ACL LOG.
func (d *Daemon) prefixLoop(ctx context.Context) {
	failing := false
	report := func() (live []string, ok bool) {
		live, err := d.st.ReportPrefix(ctx, FleetTTL)
		switch {
		case errors.Is(err, store.ErrDenied):
			d.cfg.Logger.Warn("the Redis user may not write "+PrefixesKey+"; this daemon does not record its key prefix, so Client.CheckPrefix cannot see it (grant it ~"+PrefixesKey+" and +zremrangebyscore)",
				"prefix", d.cfg.Prefix, "err", err)
			return nil, false
		case err != nil && ctx.Err() == nil && !failing:
			d.cfg.Logger.Warn("record the key prefix failed (Client.CheckPrefix will not see this daemon); will retry",
				"key", PrefixesKey, "prefix", d.cfg.Prefix, "err", err)
			failing = true
		case err == nil && failing:
			d.cfg.Logger.Info("recorded the key prefix again", "key", PrefixesKey, "prefix", d.cfg.Prefix)
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
	t := time.NewTicker(FleetReportInterval)
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
// one Redis; Client.CheckPrefix is the producer's side of the check.
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

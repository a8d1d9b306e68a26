package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrNoDaemon is the error of Client.CheckPrefix when no daemon reported
// its key prefix within FleetTTL, on any prefix.
var ErrNoDaemon = errors.New("no live courier daemon")

// PrefixError reports that daemons run, but none on the Client's key
// prefix (Client.CheckPrefix): jobs it enqueues would never run.
type PrefixError struct {
	Prefix string   // the Client's prefix (worker.Config.Prefix)
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

// CheckPrefix checks that a live worker.Daemon runs on c's key prefix
// (worker.Config.Prefix), so that the jobs enqueued there will be run. It returns nil
// when one reported within FleetTTL; a *PrefixError listing the prefixes
// in use when daemons run only on others; an error wrapping ErrNoDaemon
// when no daemon reported at all; or the Redis error when Redis cannot be
// read (unreachable, or an ACL without rediskeys.PrefixesKey), which says nothing
// about the daemons.
//
// A daemon is seen from its start, and still up to FleetTTL after it
// stopped. It does not check that a daemon serves a given queue: see
// Fleet for that.
//
// Daemons report their prefix in one place every process can read,
// whatever its prefix: rediskeys.PrefixesKey, a zset of the prefixes
// reported within FleetTTL, the one key Courier writes outside
// worker.Config.Prefix. A Redis user restricted to its prefix's keys
// needs that key as well: without it a Daemon logs one warning, stops
// reporting and runs on, and CheckPrefix returns Redis' NOPERM error.
func (c *Client) CheckPrefix(ctx context.Context) error {
	live, err := c.core.St.LivePrefixes(ctx, FleetTTL)
	switch {
	case err != nil:
		return fmt.Errorf("check key prefix %q: %w", c.core.Prefix, err)
	case slices.Contains(live, c.core.Prefix):
		return nil
	case len(live) == 0:
		return fmt.Errorf("check key prefix %q: %w reported within %s", c.core.Prefix, ErrNoDaemon, FleetTTL)
	}
	return &PrefixError{Prefix: c.core.Prefix, Live: live}
}

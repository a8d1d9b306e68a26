package bench

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// serverStats is a snapshot of the counters courier bench reports.
type serverStats struct {
	calls  map[string]int64 // INFO commandstats: command → calls
	cpuSec float64          // used_cpu_user + used_cpu_sys
	memory int64            // used_memory
	// lazyfree is lazyfree_pending_objects: memory still being freed in the
	// background (UNLINK of an earlier run), which would skew memory deltas.
	lazyfree int64
}

// scriptInternal lists the commands Courier's scripts call inside Redis.
// INFO commandstats counts them like commands sent by clients, so they are
// left out when counting the calls Courier makes. The few Courier also
// sends itself are rare beside a job's calls: the fleet's heartbeat SET and
// the prefix report's ZADD and ZREMRANGEBYSCORE, one a process every few
// seconds, and a triage by ids' ZMSCORE, which no bench mode runs.
var scriptInternal = map[string]bool{
	"time": true, "hget": true, "hmget": true, "hset": true, "hsetnx": true, "hdel": true, "hincrby": true,
	"zadd": true, "zrem": true, "zrange": true, "zrangebyscore": true, "zscore": true,
	"zmscore": true, "zcount": true, "zcard": true, "publish": true,
	"zrank": true, "zremrangebyscore": true, "zremrangebyrank": true, "pexpire": true, "exists": true,
	"hexists": true, "del": true, "pttl": true, "hstrlen": true,
	// forget.lua's: a queue left with completed jobs only is unused.
	"hlen": true, "unlink": true,
	// queue_set.lua's and queue_copy.lua's (a pause); the fleet's heartbeat SET, a client's, is counted here
	// too: one a process every few seconds, nothing beside a job's calls.
	"set": true,
	// import.lua's ledger of imported ids (courier import asynq; no bench
	// mode runs it).
	"smismember": true, "sadd": true,
	// keys.lua's: a key's waiting jobs by level and run-at, its waiting
	// count, the ready key of the lowest pass.
	"zrangebylex": true, "zincrby": true, "zpopmin": true,
}

// clientCalls is the number of commands clients sent between a and b, not
// counting the commands scripts ran inside Redis, nor INFO itself.
func clientCalls(a, b serverStats) int64 {
	var n int64
	for cmd, calls := range b.calls {
		if scriptInternal[cmd] || cmd == "info" {
			continue
		}
		n += calls - a.calls[cmd]
	}
	return n
}

// snapshot reads INFO commandstats, cpu and memory of one node: c is a
// master's own connection (masters.go).
func snapshot(ctx context.Context, c rueidis.Client) (serverStats, error) {
	s := serverStats{calls: make(map[string]int64)}
	for _, section := range []string{"commandstats", "cpu", "memory"} {
		txt, err := c.Do(ctx, c.B().Info().Section(section).Build()).ToString()
		if err != nil {
			return s, fmt.Errorf("INFO %s: %w", section, err)
		}
		sc := bufio.NewScanner(strings.NewReader(txt))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			name, val, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(name, "cmdstat_"):
				cmd := strings.TrimPrefix(name, "cmdstat_")
				for _, kv := range strings.Split(val, ",") {
					if v, ok := strings.CutPrefix(kv, "calls="); ok {
						n, _ := strconv.ParseInt(v, 10, 64)
						s.calls[cmd] = n
					}
				}
			case name == "used_cpu_user" || name == "used_cpu_sys":
				f, _ := strconv.ParseFloat(val, 64)
				s.cpuSec += f
			case name == "used_memory":
				s.memory, _ = strconv.ParseInt(val, 10, 64)
			case name == "lazyfree_pending_objects":
				s.lazyfree, _ = strconv.ParseInt(val, 10, 64)
			}
		}
	}
	return s, nil
}

// snapshots takes a snapshot of every master, in order.
func snapshots(ctx context.Context, ms []*master) ([]serverStats, error) {
	out := make([]serverStats, len(ms))
	for i, m := range ms {
		s, err := snapshot(ctx, m.conn)
		if err != nil {
			return nil, fmt.Errorf("master %s: %w", m.addr, err)
		}
		out[i] = s
	}
	return out, nil
}

// quietSnapshots waits (up to 30s) until no master frees memory in the
// background, then takes a snapshot of each: the baseline of the memory
// delta.
func quietSnapshots(ctx context.Context, ms []*master) ([]serverStats, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ss, err := snapshots(ctx, ms)
		if err != nil || time.Now().After(deadline) || !slices.ContainsFunc(ss, func(s serverStats) bool { return s.lazyfree > 0 }) {
			return ss, err
		}
		if !sleep(ctx, 50*time.Millisecond) {
			return ss, ctx.Err()
		}
	}
}

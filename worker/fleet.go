package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Fleet is what the processes serving a queue report about themselves:
// every running Daemon reports, for each of its queues, its concurrency and
// rate limit, every FleetReportInterval; a report lapses after FleetTTL.
type Fleet struct {
	// Leader is the id of the process that leads the queue (holds its
	// leader lock); "" when none does.
	Leader    string
	Processes []FleetProcess // sorted by ID
}

// FleetProcess is one Daemon serving a queue.
type FleetProcess struct {
	ID          string // see Daemon.ID
	Concurrency int
	RateLimit   RateLimit // zero: none
	Leader      bool
	ReportedAt  time.Time // by the process's clock
}

// Concurrency is how many jobs of the queue the fleet runs at most at once.
func (f Fleet) Concurrency() int {
	n := 0
	for _, p := range f.Processes {
		n += p.Concurrency
	}
	return n
}

// How often a Daemon reports to the fleet of each queue, and how long a
// report lasts.
const (
	FleetReportInterval = 10 * time.Second
	FleetTTL            = 3 * FleetReportInterval
)

// Fleet returns the processes serving queue and its leader.
func (c *Client) Fleet(ctx context.Context, queue string) (Fleet, error) {
	if err := ValidateQueueName(queue); err != nil {
		return Fleet{}, err
	}
	members, leader, err := c.st.Fleet(ctx, queue)
	if err != nil {
		return Fleet{}, err
	}
	f := Fleet{Leader: leader, Processes: make([]FleetProcess, len(members))}
	for i, m := range members {
		f.Processes[i] = FleetProcess{
			ID: m.ID, Concurrency: m.Concurrency, Leader: m.Leader, ReportedAt: m.Reported,
			RateLimit: RateLimit{N: m.RateN, Per: time.Duration(m.RatePerMs) * time.Millisecond},
		}
	}
	return f, nil
}

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

// reportLoop reports the Daemon to the fleet of each of its queues until
// ctx ends, then withdraws it.
func (d *Daemon) reportLoop(ctx context.Context) {
	members := make([]store.Member, 0, len(d.queues))
	retain := make([]time.Duration, 0, len(d.queues))
	for _, name := range d.queues {
		reg, _ := d.reg.lookup(name)
		members = append(members, store.Member{
			ID: d.id, Concurrency: reg.opts.Concurrency,
			RateN: reg.opts.RateLimit.N, RatePerMs: reg.opts.RateLimit.Per.Milliseconds(),
		})
		retain = append(retain, reg.opts.IDRetention)
	}
	// The queue's id retention lives in Redis, where every producer's
	// enqueue reads it: a process that has one writes it with each report
	// (so a restarted Redis gets it back); one without removes it once,
	// at start.
	first := true
	report := func() {
		for i, name := range d.queues {
			members[i].Reported = time.Now()
			if err := d.st.Report(ctx, name, members[i], FleetTTL); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("fleet report failed; will retry", "queue", name, "err", err)
			}
			if retain[i] > 0 || first {
				if err := d.st.SetIDRetention(ctx, name, retain[i]); err != nil && ctx.Err() == nil {
					d.cfg.Logger.Warn("store the queue's id retention failed; will retry", "queue", name, "err", err)
				}
			}
		}
		first = false
	}
	report()
	t := time.NewTicker(FleetReportInterval)
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

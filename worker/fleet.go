package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Fleet is what the processes serving a queue report about themselves:
// every running Daemon reports, for each of its queues, its concurrency,
// rate limit, version, start time and periodic schedules, every
// FleetReportInterval; a report lapses after FleetTTL.
type Fleet struct {
	// Leader is the id of the process that leads the queue (holds its
	// leader lock); "" when none does.
	Leader string
	// LeaderTTL is the time left on the queue's leader lock (PTTL of its
	// key); 0 when no process leads. The leader's watchdog renews it to
	// Config.LeaderLease every LeaderLease/3.
	LeaderTTL time.Duration
	Processes []FleetProcess // sorted by ID
	// Partitions is how many partitions the queue has (1: never split;
	// see QueueOptions.Partitions). Leader and LeaderTTL are partition
	// 0's, the partition that fires the periodic jobs.
	Partitions int
	// PartitionLeaders holds, for a queue of several partitions, the id of
	// the process leading each partition, in order ("" where none does);
	// nil for a queue of one.
	PartitionLeaders []string
}

// Leads counts the partitions process id leads (for a queue of one, 1
// when it is the Leader).
func (f Fleet) Leads(id string) int {
	if f.PartitionLeaders == nil {
		if f.Leader == id && id != "" {
			return 1
		}
		return 0
	}
	n := 0
	for _, l := range f.PartitionLeaders {
		if l == id && id != "" {
			n++
		}
	}
	return n
}

// FleetProcess is one Daemon serving a queue.
type FleetProcess struct {
	ID          string // see Daemon.ID
	Concurrency int
	RateLimit   RateLimit // zero: none
	Leader      bool
	ReportedAt  time.Time // by the process's clock
	// Version is the process's Config.Version; "" for a process of a
	// version that did not report it.
	Version string
	// StartedAt is when the process's Daemon started running (its Run), by
	// its clock; zero for a process of a version that did not report it.
	StartedAt time.Time
	// Periodic names the queue's periodic schedules the process would fire
	// as leader (QueueOptions.Periodic, by Name), sorted.
	Periodic []string
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

// Fleet returns the processes serving queue, its leader and the time left
// on its leader lock, and the leader of each partition of a partitioned
// queue. It reads them in three round trips (a fourth forgets the reports
// that lapsed, when there are any), and one more for the partitions'
// leaders.
func (c *Client) Fleet(ctx context.Context, queue string) (Fleet, error) {
	if err := ValidateQueueName(queue); err != nil {
		return Fleet{}, err
	}
	info, err := c.st.FleetInfo(ctx, queue)
	if err != nil {
		return Fleet{}, err
	}
	f := Fleet{Leader: info.LeaderID, LeaderTTL: info.LeaderTTL, Processes: make([]FleetProcess, len(info.Members))}
	for i, m := range info.Members {
		p := FleetProcess{
			ID: m.ID, Concurrency: m.Concurrency, Leader: m.Leader, ReportedAt: m.Reported,
			RateLimit: RateLimit{N: m.RateN, Per: time.Duration(m.RatePerMs) * time.Millisecond},
			Version:   m.Version, StartedAt: m.Started,
		}
		for _, s := range m.Periodic {
			p.Periodic = append(p.Periodic, s.Name)
		}
		slices.Sort(p.Periodic)
		f.Processes[i] = p
	}
	l, err := c.layout(ctx, queue)
	if err != nil {
		return Fleet{}, err
	}
	if f.Partitions = l.Partitions; f.Partitions > 1 {
		if f.PartitionLeaders, err = c.st.Leaders(ctx, l.Names(queue)); err != nil {
			return Fleet{}, err
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
	started := time.Now() // StartedAt: Run starts this loop once set up, a moment after it began
	members := make([]store.Member, 0, len(d.queues))
	retain := make([]time.Duration, 0, len(d.queues))
	for _, name := range d.queues {
		reg, _ := d.reg.lookup(name)
		members = append(members, store.Member{
			ID: d.id, Concurrency: reg.opts.Concurrency,
			RateN: reg.opts.RateLimit.N, RatePerMs: reg.opts.RateLimit.Per.Milliseconds(),
			Version: d.cfg.Version, Started: started, Periodic: reportSchedules(reg.opts.Periodic),
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
			if err := d.st.Report(ctx, name, members[i], FleetTTL); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Warn("fleet report failed; will retry", "queue", name, "err", err)
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

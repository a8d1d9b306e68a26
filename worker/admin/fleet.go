package admin

import (
	"context"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/core"
)

// Fleet is what the processes serving a queue report about themselves
// (Client.Fleet): every running worker.Daemon reports, for each of its
// queues, its concurrency, rate limit, version, start time and periodic
// schedules, every FleetReportInterval; a report lapses after FleetTTL.
type Fleet struct {
	// Leader is the id of the process that leads the queue (holds its
	// leader lock); "" when none does.
	Leader string
	// LeaderTTL is the time left on the queue's leader lock (PTTL of its
	// key); 0 when no process leads. The leader's watchdog renews it to
	// worker.Config.LeaderLease every LeaderLease/3.
	LeaderTTL time.Duration
	Processes []FleetProcess // sorted by ID
	// Partitions is how many partitions the queue has (1: never split;
	// see worker.QueueOptions.Partitions). Leader and LeaderTTL are partition
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

// FleetProcess is one worker.Daemon serving a queue (Fleet.Processes).
type FleetProcess struct {
	ID          string // see worker.Daemon.ID
	Concurrency int
	RateLimit   worker.RateLimit // zero: none
	Leader      bool
	ReportedAt  time.Time // by the process's clock
	// Version is the process's worker.Config.Version; "" for a process of a
	// version that did not report it.
	Version string
	// StartedAt is when the process's Daemon started running (its Run), by
	// its clock; zero for a process of a version that did not report it.
	StartedAt time.Time
	// Periodic names the queue's periodic schedules the process would fire
	// as leader (worker.QueueOptions.Periodic, by Name), sorted.
	Periodic []string
	// Kinds lists the kinds of job the process serves on the queue (the keys
	// of its worker.Kinds, "" for jobs without a kind), sorted; nil when the
	// queue has one handler for every job.
	Kinds []string
}

// Concurrency is how many jobs of the queue the fleet runs at most at once.
func (f Fleet) Concurrency() int {
	n := 0
	for _, p := range f.Processes {
		n += p.Concurrency
	}
	return n
}

// How often a worker.Daemon reports to the fleet of each queue (and its
// key prefix, see CheckPrefix), and how long a report lasts: an
// operator's Fleet shows a process from its first report until FleetTTL
// after its last.
const (
	FleetReportInterval = core.FleetReportInterval
	FleetTTL            = core.FleetTTL
)

// Fleet returns the processes serving queue, its leader and the time left
// on its leader lock, and the leader of each partition of a partitioned
// queue. It reads them in three round trips (a fourth forgets the reports
// that lapsed, when there are any), and one more for the partitions'
// leaders.
func (c *Client) Fleet(ctx context.Context, queue string) (Fleet, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return Fleet{}, err
	}
	info, err := c.core.St.FleetInfo(ctx, queue)
	if err != nil {
		return Fleet{}, err
	}
	f := Fleet{Leader: info.LeaderID, LeaderTTL: info.LeaderTTL, Processes: make([]FleetProcess, len(info.Members))}
	for i, m := range info.Members {
		p := FleetProcess{
			ID: m.ID, Concurrency: m.Concurrency, Leader: m.Leader, ReportedAt: m.Reported,
			RateLimit: worker.RateLimit{N: m.RateN, Per: time.Duration(m.RatePerMs) * time.Millisecond},
			Version:   m.Version, StartedAt: m.Started, Kinds: m.Kinds,
		}
		for _, s := range m.Periodic {
			p.Periodic = append(p.Periodic, s.Name)
		}
		slices.Sort(p.Periodic)
		f.Processes[i] = p
	}
	l, err := c.core.Layer.Layout(ctx, queue)
	if err != nil {
		return Fleet{}, err
	}
	if f.Partitions = l.Partitions; f.Partitions > 1 {
		if f.PartitionLeaders, err = c.core.St.Leaders(ctx, l.Names(queue)); err != nil {
			return Fleet{}, err
		}
	}
	return f, nil
}

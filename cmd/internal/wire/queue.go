package wire

import (
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Queue is a queue: whether it is paused, its sizes by state and the
// fleet that serves it.
type Queue struct {
	Name string `json:"name"`
	// Paused is set while workers claim none of the queue's jobs.
	Paused bool   `json:"paused"`
	Jobs   Counts `json:"jobs"`
	// Leader is the id of the leading process; null when none leads.
	Leader *string `json:"leader"`
	// LeaderTTL is the time left on the queue's leader lock, a Go duration
	// to the ms ("29.873s"); left out when none leads.
	LeaderTTL string `json:"leader_ttl,omitempty"`
	// Concurrency is the sum of the serving processes' concurrency.
	Concurrency int `json:"concurrency"`
	// RateLimit is the queue's limit as the leader (else the first process
	// that has one) reports it; null for none.
	RateLimit *string   `json:"rate_limit"`
	Workers   []Process `json:"workers"`
	// Partitions is how many partitions the queue has; 1 for a queue never
	// split. Leader is then partition 0's.
	Partitions int `json:"partitions"`
	// PartitionLeaders holds, for a queue of several partitions, the id of
	// the process leading each partition, in order, "" where none does;
	// left out for a queue of one.
	PartitionLeaders []string `json:"partition_leaders,omitempty"`
}

// Counts are a queue's jobs by state.
type Counts struct {
	Scheduled int64 `json:"scheduled"`
	Ready     int64 `json:"ready"`
	Active    int64 `json:"active"`
	Dead      int64 `json:"dead"`
	// Completed counts the finished jobs the queue retains; 0 for a queue
	// that retains none.
	Completed int64 `json:"completed"`
	// Cancelled counts the cancelled jobs kept (until trimmed, requeued
	// or purged).
	Cancelled int64 `json:"cancelled"`
}

// Process is one process serving a queue.
type Process struct {
	ID          string  `json:"id"`
	Concurrency int     `json:"concurrency"`
	RateLimit   *string `json:"rate_limit"`
	Leader      bool    `json:"leader"`
	// SeenAt is when the process last reported, by its clock.
	SeenAt time.Time `json:"seen_at"`
	// Version is the process's version; "" for a process too old to
	// report it.
	Version string `json:"version"`
	// StartedAt is when the process started, by its clock; null for a
	// process too old to report it.
	StartedAt *time.Time `json:"started_at"`
	// Periodic names the queue's periodic schedules the process fires
	// when it leads.
	Periodic []string `json:"periodic"`
	// Kinds lists the kinds of job the process serves on the queue, sorted,
	// "" for jobs without a kind (admin.FleetProcess.Kinds); left out when
	// it has one handler for every job of the queue.
	Kinds []string `json:"kinds,omitempty"`
}

// QueueOf is a queue as the API and the CLI show it, from its stats and
// its fleet.
func QueueOf(name string, s admin.QueueStats, f admin.Fleet) Queue {
	v := Queue{
		Name:             name,
		Paused:           s.Paused,
		Jobs:             Counts{Scheduled: s.Scheduled, Ready: s.Ready, Active: s.Active, Dead: s.Dead, Completed: s.Completed, Cancelled: s.Cancelled},
		Workers:          make([]Process, 0, len(f.Processes)),
		Partitions:       max(f.Partitions, 1),
		PartitionLeaders: f.PartitionLeaders,
	}
	if f.Leader != "" {
		v.Leader = &f.Leader
	}
	if f.LeaderTTL > 0 {
		v.LeaderTTL = f.LeaderTTL.Round(time.Millisecond).String()
	}
	var limit, leaderLimit *string
	for _, p := range f.Processes {
		v.Concurrency += p.Concurrency
		pv := Process{ID: p.ID, Concurrency: p.Concurrency, RateLimit: rateLimit(p.RateLimit), Leader: p.Leader, SeenAt: p.ReportedAt.UTC(),
			Version: p.Version, Periodic: p.Periodic, Kinds: p.Kinds}
		if pv.Periodic == nil {
			pv.Periodic = []string{}
		}
		if !p.StartedAt.IsZero() {
			started := p.StartedAt.UTC()
			pv.StartedAt = &started
		}
		if limit == nil {
			limit = pv.RateLimit
		}
		if p.Leader || p.ID == f.Leader {
			leaderLimit = pv.RateLimit
		}
		v.Workers = append(v.Workers, pv)
	}
	v.RateLimit = limit
	if leaderLimit != nil {
		v.RateLimit = leaderLimit
	}
	return v
}

// Stats is the inverse of the counts and pause flag of QueueOf.
func (v *Queue) Stats() admin.QueueStats {
	return admin.QueueStats{Scheduled: v.Jobs.Scheduled, Ready: v.Jobs.Ready, Active: v.Jobs.Active, Dead: v.Jobs.Dead,
		Completed: v.Jobs.Completed, Cancelled: v.Jobs.Cancelled, Paused: v.Paused}
}

// Fleet is the inverse of the fleet part of QueueOf, report times in UTC
// as admin.Client.Fleet reads them; a rate limit the worker package
// cannot parse is left out.
func (v *Queue) Fleet() admin.Fleet {
	f := admin.Fleet{Processes: make([]admin.FleetProcess, len(v.Workers)), Partitions: v.Partitions, PartitionLeaders: v.PartitionLeaders}
	if v.Leader != nil {
		f.Leader = *v.Leader
	}
	f.LeaderTTL, _ = time.ParseDuration(v.LeaderTTL) // "" when none leads
	for i, p := range v.Workers {
		f.Processes[i] = admin.FleetProcess{ID: p.ID, Concurrency: p.Concurrency, Leader: p.Leader, ReportedAt: p.SeenAt.UTC(), Version: p.Version}
		if len(p.Periodic) > 0 {
			f.Processes[i].Periodic = p.Periodic
		}
		if len(p.Kinds) > 0 {
			f.Processes[i].Kinds = p.Kinds
		}
		if p.StartedAt != nil {
			f.Processes[i].StartedAt = p.StartedAt.UTC()
		}
		if p.RateLimit != nil {
			// What worker.RateLimit.String wrote; anything else is left out.
			f.Processes[i].RateLimit, _ = worker.ParseRateLimit(*p.RateLimit)
		}
	}
	return f
}

func rateLimit(r worker.RateLimit) *string {
	if r == (worker.RateLimit{}) {
		return nil
	}
	s := r.String()
	return &s
}

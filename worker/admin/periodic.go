package admin

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/core"
)

// PeriodicStatus is one periodic schedule of a queue, as Client.Periodic
// reads it.
type PeriodicStatus struct {
	// Name is the schedule's name (worker.Periodic.Name).
	Name string
	// Schedule says when it fires: "every 1m0s" or the cron expression; ""
	// when no live process reports the schedule (only its last fire is
	// remembered).
	Schedule string
	// LastFire is the schedule's last fire time, zero when it never fired.
	LastFire time.Time
	// NextFire is the next fire time after now by the schedule; zero when
	// Schedule is "".
	NextFire time.Time
}

// Periodic returns the periodic schedules of queue, sorted by name: those
// the live processes serving it report (with their schedule) and those
// whose last fire Redis remembers (kept while a schedule is configured,
// and for a while after it was removed). It reads both in two round trips,
// as Fleet does.
//
// When the processes report different schedules under one name (during a
// rolling change of the configuration), the schedule of the most recently
// started process is shown: it is the configuration being rolled out.
// NextFire is computed on this process's clock (time.Now), from the
// schedule alone: it is when the queue's leader fires next, unless no
// process leads then or the leader is still catching up on missed fires.
// Processes of versions that do not report their schedules (before
// FleetProcess.Periodic) add nothing but what the last fires show.
func (c *Client) Periodic(ctx context.Context, queue string) ([]PeriodicStatus, error) {
	if err := worker.ValidateQueueName(queue); err != nil {
		return nil, err
	}
	members, last, err := c.core.St.Schedules(ctx, queue)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	byName := make(map[string]PeriodicStatus, len(last))
	started := make(map[string]time.Time) // the start of the process whose schedule byName shows
	for _, m := range members {
		for _, s := range m.Periodic {
			if st, ok := byName[s.Name]; ok && st.Schedule != "" && !m.Started.After(started[s.Name]) {
				continue
			}
			sched, desc, err := core.ReportedSchedule(s)
			if err != nil {
				continue // a report this version cannot read: as if not reported
			}
			byName[s.Name] = PeriodicStatus{Name: s.Name, Schedule: desc, NextFire: sched.Next(now)}
			started[s.Name] = m.Started
		}
	}
	for name, at := range last {
		st := byName[name]
		st.Name, st.LastFire = name, at
		byName[name] = st
	}
	out := make([]PeriodicStatus, 0, len(byName))
	for _, st := range byName {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b PeriodicStatus) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

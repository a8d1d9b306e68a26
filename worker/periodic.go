package worker

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Periodic is a job the queue's leader enqueues on a schedule: every Every,
// or at the times of a Cron expression. Each fire is enqueued once across
// the fleet, with the id periodic:<Name>:<fire time in Unix ms>, and runs
// like any job of the queue. The last fire time is kept in Redis, so a new
// leader carries on where the old one stopped.
type Periodic struct {
	// Name identifies the schedule within its queue: 1 to 64 characters from
	// A-Z a-z 0-9 . _ -. Renaming a schedule starts it afresh.
	Name string
	// Every fires at each multiple of this interval (counted from a fixed
	// origin, so every process computes the same times), at least 1s.
	Every time.Duration
	// Cron fires at the times of a cron expression: five fields (minute
	// hour day-of-month month day-of-week), an optional leading seconds
	// field, or a descriptor such as @hourly; UTC unless it starts with
	// CRON_TZ=<zone>. Set Every or Cron, not both.
	Cron string
	// Kind is the kind of every fire's job (JobSpec.Kind), for a queue
	// whose handler is a Kinds that serves it; "" for none.
	Kind string
	// Payload is the payload of every fire.
	Payload []byte
	// MaxAttempts and Timeout apply to each fire; 0 means the queue's.
	MaxAttempts int
	Timeout     time.Duration
	// SkipMissed drops the fires missed while no process led the queue. By
	// default a new leader enqueues them, up to 1,000.
	SkipMissed bool
}

// maxScheduleName bounds a schedule's name, which is part of its jobs' ids.
const maxScheduleName = 64

// schedule validates p and returns its fire times.
func (p Periodic) schedule() (core.FireTimes, error) {
	if p.Name == "" || len(p.Name) > maxScheduleName {
		return nil, invalid("Name", "must be 1 to %d characters (got %q)", maxScheduleName, p.Name)
	}
	for i := 0; i < len(p.Name); i++ {
		if !isNameChar(p.Name[i]) {
			return nil, invalid("Name", "%q has %q at byte %d; allowed are A-Z a-z 0-9 . _ -", p.Name, p.Name[i], i)
		}
	}
	if p.Kind != "" {
		if err := ValidateKind(p.Kind); err != nil {
			return nil, err
		}
	}
	if p.MaxAttempts < 0 {
		return nil, invalid("MaxAttempts", "must not be negative (got %d)", p.MaxAttempts)
	}
	if p.Timeout < 0 {
		return nil, invalid("Timeout", "must not be negative (got %s)", p.Timeout)
	}
	if p.Every != 0 && p.Cron != "" {
		return nil, invalid("", "schedule %q sets both every and cron; set one", p.Name)
	}
	if p.Every == 0 && p.Cron == "" {
		return nil, invalid("", "schedule %q needs every or cron", p.Name)
	}
	return parseSchedule(p.Every, p.Cron)
}

// parseSchedule returns the fire times of a schedule (core.ParseSchedule),
// a bad field a *ValidationError naming it.
func parseSchedule(every time.Duration, cronExpr string) (core.FireTimes, error) {
	sched, err := core.ParseSchedule(every, cronExpr)
	var fe *core.FieldError
	if errors.As(err, &fe) {
		return nil, invalid(fe.Field, "%s", fe.Reason)
	}
	return sched, err
}

// reportSchedules is what a Daemon reports to a queue's fleet of the
// queue's schedules ps (store.Member.Periodic), sorted by name.
func reportSchedules(ps []Periodic) []store.MemberSchedule {
	if len(ps) == 0 {
		return nil
	}
	out := make([]store.MemberSchedule, len(ps))
	for i, p := range ps {
		out[i] = store.MemberSchedule{Name: p.Name, EveryMs: p.Every.Milliseconds(), Cron: p.Cron}
	}
	slices.SortFunc(out, func(a, b store.MemberSchedule) int { return strings.Compare(a.Name, b.Name) })
	return out
}

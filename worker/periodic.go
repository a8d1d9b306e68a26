package worker

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
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

// cronParser accepts five or six fields and descriptors.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// schedule validates p and returns its fire times.
func (p Periodic) schedule() (interface{ Next(time.Time) time.Time }, error) {
	if p.Name == "" || len(p.Name) > maxScheduleName {
		return nil, invalid("Name", "must be 1 to %d characters (got %q)", maxScheduleName, p.Name)
	}
	for i := 0; i < len(p.Name); i++ {
		if !isNameChar(p.Name[i]) {
			return nil, invalid("Name", "%q has %q at byte %d; allowed are A-Z a-z 0-9 . _ -", p.Name, p.Name[i], i)
		}
	}
	if p.MaxAttempts < 0 {
		return nil, invalid("MaxAttempts", "must not be negative (got %d)", p.MaxAttempts)
	}
	if p.Timeout < 0 {
		return nil, invalid("Timeout", "must not be negative (got %s)", p.Timeout)
	}
	switch {
	case p.Every != 0 && p.Cron != "":
		return nil, invalid("", "schedule %q sets both every and cron; set one", p.Name)
	case p.Every != 0:
		if p.Every < time.Second {
			return nil, invalid("Every", "must be at least 1s (got %s)", p.Every)
		}
		return interval(p.Every), nil
	case p.Cron != "":
		s, err := cronParser.Parse(p.Cron)
		if err != nil {
			return nil, invalid("Cron", "%q: %v", p.Cron, err)
		}
		return s, nil
	}
	return nil, invalid("", "schedule %q needs every or cron", p.Name)
}

// interval fires at each multiple of itself since the zero time.Time, the
// same in every process.
type interval time.Duration

// Next implements the schedule.
func (d interval) Next(t time.Time) time.Time {
	return t.Truncate(time.Duration(d)).Add(time.Duration(d))
}

func (d interval) String() string { return fmt.Sprintf("every %s", time.Duration(d)) }

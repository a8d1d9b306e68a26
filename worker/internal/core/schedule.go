package core

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// FieldError is a bad value of a schedule's field (Every or Cron); the
// public packages turn it into their *worker.ValidationError.
type FieldError struct {
	Field  string
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string { return "invalid " + e.Field + ": " + e.Reason }

// FireTimes gives the fire times of a periodic schedule: Next returns the
// first fire strictly after t.
type FireTimes interface{ Next(time.Time) time.Time }

// cronParser accepts five or six fields and descriptors.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule returns the fire times of a schedule that fires every
// every, or at the times of the cron expression (one of them set, the
// other zero). It is the one parser of worker.Periodic's schedules, used
// by the Daemon that fires them and by admin.Client.Periodic, which
// rebuilds them from the fleet's reports. A cron expression without
// CRON_TZ= (or TZ=) is read in UTC, whatever the process's local time
// zone. A bad value is a *FieldError.
func ParseSchedule(every time.Duration, cronExpr string) (FireTimes, error) {
	if cronExpr == "" {
		if every < time.Second {
			return nil, &FieldError{"Every", fmt.Sprintf("must be at least 1s (got %s)", every)}
		}
		return Interval(every), nil
	}
	s, err := cronParser.Parse(cronExpr)
	if err != nil {
		return nil, &FieldError{"Cron", fmt.Sprintf("%q: %v", cronExpr, err)}
	}
	if spec, ok := s.(*cron.SpecSchedule); ok && spec.Location == time.Local {
		spec.Location = time.UTC // the parser's default; Periodic.Cron says UTC
	}
	return s, nil
}

// ReportedSchedule rebuilds a schedule from a fleet report: its fire
// times and how admin.PeriodicStatus.Schedule describes it ("every 1m0s"
// or the cron expression). A report that sets both or neither is refused.
func ReportedSchedule(s store.MemberSchedule) (FireTimes, string, error) {
	if (s.EveryMs != 0) == (s.Cron != "") {
		return nil, "", fmt.Errorf("schedule %q: a report sets one of every_ms and cron", s.Name)
	}
	sched, err := ParseSchedule(time.Duration(s.EveryMs)*time.Millisecond, s.Cron)
	if err != nil {
		return nil, "", err
	}
	if s.Cron != "" {
		return sched, s.Cron, nil
	}
	return sched, Interval(time.Duration(s.EveryMs) * time.Millisecond).String(), nil
}

// Interval fires at each multiple of itself since the zero time.Time, the
// same in every process.
type Interval time.Duration

// Next implements FireTimes.
func (d Interval) Next(t time.Time) time.Time {
	return t.Truncate(time.Duration(d)).Add(time.Duration(d))
}

// String says "every <d>".
func (d Interval) String() string { return fmt.Sprintf("every %s", time.Duration(d)) }

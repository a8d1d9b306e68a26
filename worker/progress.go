package worker

import (
	"errors"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// MaxProgressMessageLen bounds the message of a progress report, in bytes.
const MaxProgressMessageLen = 256

// Progress is what a running job last reported of its progress
// (Job.ReportProgress).
type Progress struct {
	// Percent is how far the job is, 0 to 100.
	Percent float64
	// Message says what it is doing; may be empty.
	Message string
	// UpdatedAt is when the report was stored, by the Redis clock: within
	// about a second of the report.
	UpdatedAt time.Time
}

// ErrNotRunning is returned by Job.ReportProgress and Job.SetResult on a
// Job that is not a handler's running job (one read by Get).
var ErrNotRunning = errors.New("the job is not running in this process")

// ReportProgress records how far the running job is: percent from 0 to
// 100 (kept to two decimals; -0 is 0; NaN and the infinities are refused)
// and a short message (at most MaxProgressMessageLen bytes of UTF-8,
// no control characters). It never blocks nor calls Redis: the daemon
// stores the last report of each job within about a second, all its jobs'
// reports in one batched call at most once a second, and it is gone once
// the attempt ends. The error is a *ValidationError naming
// Percent or Message, or ErrNotRunning.
func (j *Job) ReportProgress(percent float64, message string) error {
	if !j.run.Running() {
		return ErrNotRunning
	}
	pct, ok := store.NormalPercent(percent)
	if !ok {
		return invalid("Percent", "%v is not a number from 0 to 100", percent)
	}
	if err := validateText("Message", "", message, MaxProgressMessageLen); err != nil {
		return err
	}
	j.run.Report(store.Progress{Percent: pct, Message: message})
	return nil
}

// SetResult sets what the job returns when its handler succeeds, kept with
// the job by a queue that retains completed jobs
// (QueueOptions.RetainCompleted). The last call wins; b is copied. A
// result longer than Config.MaxResultBytes is refused with a
// *ValidationError naming Result.
func (j *Job) SetResult(b []byte) error {
	if !j.run.Running() {
		return ErrNotRunning
	}
	if len(b) > j.maxResult {
		return invalid("Result", "is %d bytes long; the limit is %d (Config.MaxResultBytes)", len(b), j.maxResult)
	}
	j.run.SetResult(append([]byte(nil), b...))
	return nil
}

// progressOf is p as the public type; nil for nil.
func progressOf(p *store.Progress) *Progress {
	if p == nil {
		return nil
	}
	return &Progress{Percent: p.Percent, Message: p.Message, UpdatedAt: p.UpdatedAt}
}

package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker"
)

// Job is a job.
type Job struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
	// State is scheduled, ready, active or dead.
	State string `json:"state"`
	// Attempts counts the attempts spent, a running one included.
	Attempts int `json:"attempts"`
	// MaxAttempts and Timeout are the job's own; left out when the queue's
	// apply.
	MaxAttempts int    `json:"max_attempts,omitempty"`
	Timeout     string `json:"timeout,omitempty"`
	// Priority is low, normal or high; the unique fields are left out
	// when not set (no unique key, no window).
	Priority          string     `json:"priority"`
	UniqueKey         string     `json:"unique_key,omitempty"`
	UniqueFor         string     `json:"unique_for,omitempty"`
	UniqueAfterFinish bool       `json:"unique_after_finish,omitempty"`
	EnqueuedAt        *time.Time `json:"enqueued_at,omitempty"`
	RunAt             *time.Time `json:"run_at,omitempty"`
	// Worker, StartedAt and LeaseUntil are an active job's: the process
	// running it, when its attempt was claimed and its lease deadline.
	Worker     string     `json:"worker,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
	DiedAt     *time.Time `json:"died_at,omitempty"`
	LastError  string     `json:"last_error,omitempty"`
	// Payload holds the payload when it is compact JSON (as the API
	// stores the payloads it is given); PayloadBase64 holds any other,
	// byte for byte. Exactly one is present.
	Payload       json.RawMessage `json:"payload,omitempty"`
	PayloadBase64 *string         `json:"payload_base64,omitempty"`
}

// JobOf is j as the API and the CLI show it.
func JobOf(j *worker.Job) Job {
	v := Job{
		ID: j.ID, Queue: j.Queue, State: string(j.State), Attempts: j.Attempt, MaxAttempts: j.MaxAttempts,
		EnqueuedAt: Time(j.EnqueuedAt), RunAt: Time(j.RunAt), LeaseUntil: Time(j.LeaseUntil),
		Worker: j.Worker, StartedAt: Time(j.StartedAt), DiedAt: Time(j.DiedAt), LastError: j.LastError,
		Priority: j.Priority.String(), UniqueKey: j.UniqueKey, UniqueAfterFinish: j.UniqueAfterFinish,
	}
	if j.Timeout > 0 {
		v.Timeout = j.Timeout.String()
	}
	if j.UniqueFor > 0 {
		v.UniqueFor = j.UniqueFor.String()
	}
	if CompactJSON(j.Payload) {
		v.Payload = j.Payload
	} else {
		s := base64.StdEncoding.EncodeToString(j.Payload)
		v.PayloadBase64 = &s
	}
	return v
}

// ToWorker is the inverse of JobOf, times in the local zone as a
// worker.Client gives them. It fails on a field a server could not have
// written (a bad duration, priority or base64).
func (v *Job) ToWorker() (*worker.Job, error) {
	j := &worker.Job{
		ID: v.ID, Queue: v.Queue, State: worker.State(v.State), Attempt: v.Attempts, MaxAttempts: v.MaxAttempts,
		EnqueuedAt: localTime(v.EnqueuedAt), RunAt: localTime(v.RunAt), LeaseUntil: localTime(v.LeaseUntil),
		Worker: v.Worker, StartedAt: localTime(v.StartedAt), DiedAt: localTime(v.DiedAt), LastError: v.LastError,
		UniqueKey: v.UniqueKey, UniqueAfterFinish: v.UniqueAfterFinish,
	}
	var err error
	if j.Timeout, err = duration(v.Timeout); err != nil {
		return nil, fmt.Errorf("job %q has timeout %q: %w", v.ID, v.Timeout, err)
	}
	if j.UniqueFor, err = duration(v.UniqueFor); err != nil {
		return nil, fmt.Errorf("job %q has unique_for %q: %w", v.ID, v.UniqueFor, err)
	}
	if j.Priority, err = worker.ParsePriority(v.Priority); err != nil { // "" from a server before priorities: normal
		return nil, fmt.Errorf("job %q has priority %q: %w", v.ID, v.Priority, err)
	}
	switch {
	case v.PayloadBase64 != nil:
		p, err := base64.StdEncoding.DecodeString(*v.PayloadBase64)
		if err != nil {
			return nil, fmt.Errorf("job %q has a bad payload_base64: %w", v.ID, err)
		}
		j.Payload = p
	case len(v.Payload) > 0:
		j.Payload = []byte(v.Payload)
	}
	return j, nil
}

func duration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

// CompactJSON reports whether p is UTF-8 JSON with no white space outside
// strings: a payload shown as JSON that a client reads back byte for byte.
func CompactJSON(p []byte) bool {
	if len(p) == 0 || !utf8.Valid(p) || !json.Valid(p) {
		return false
	}
	var buf bytes.Buffer
	return json.Compact(&buf, p) == nil && bytes.Equal(buf.Bytes(), p)
}

// Time is t in UTC, nil when t is zero.
func Time(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func localTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Local()
}

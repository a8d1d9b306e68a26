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
	// Kind is the job's kind (worker.JobSpec.Kind); left out when it has
	// none.
	Kind string `json:"kind,omitempty"`
	// Key is the job key, the tenant, customer or resource the job
	// belongs to (worker.JobSpec.Key); left out when it has none.
	Key string `json:"key,omitempty"`
	// State is scheduled, ready, active, dead, completed (a finished
	// job its queue retains) or cancelled.
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
	// Headers are the job's headers as enqueued; left out when it has
	// none.
	Headers map[string]string `json:"headers,omitempty"`
	// Progress is what an active job's handler last reported; left out
	// when it reported none.
	Progress *Progress `json:"progress,omitempty"`
	// Result and ResultBase64 hold a completed job's result as Payload and
	// PayloadBase64 hold the payload (compact JSON as is, any other bytes
	// in base64); both are left out when the job has no result.
	Result       json.RawMessage `json:"result,omitempty"`
	ResultBase64 *string         `json:"result_base64,omitempty"`
	// FinishedAt is when a completed job finished, or a cancelled one was
	// cancelled, by the Redis clock.
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Progress is how far a running job is, as its handler last reported.
type Progress struct {
	// Percent is 0 to 100.
	Percent float64 `json:"percent"`
	// Message says what the job is doing; may be empty.
	Message string `json:"message"`
	// UpdatedAt is when the report was stored, by the Redis clock.
	UpdatedAt time.Time `json:"updated_at"`
}

// JobOf is j as the API and the CLI show it.
func JobOf(j *worker.Job) Job {
	v := Job{
		ID: j.ID, Queue: j.Queue, Kind: j.Kind, Key: j.Key, State: string(j.State), Attempts: j.Attempt, MaxAttempts: j.MaxAttempts,
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
	v.Payload, v.PayloadBase64 = BytesOf(j.Payload)
	if len(j.Result) > 0 {
		v.Result, v.ResultBase64 = BytesOf(j.Result)
	}
	if len(j.Headers) > 0 {
		v.Headers = j.Headers
	}
	if p := j.Progress; p != nil {
		v.Progress = &Progress{Percent: p.Percent, Message: p.Message, UpdatedAt: p.UpdatedAt.UTC()}
	}
	v.FinishedAt = Time(j.FinishedAt)
	return v
}

// BytesOf shows a payload or result: as JSON when it is compact JSON,
// which a server keeps byte for byte, else in base64. The API's Go client
// sends a payload so too.
func BytesOf(b []byte) (json.RawMessage, *string) {
	if CompactJSON(b) {
		return b, nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return nil, &s
}

// ToWorker is the inverse of JobOf, times in the local zone as a
// worker.Client gives them. It fails on a field a server could not have
// written (a bad duration, priority or base64).
func (v *Job) ToWorker() (*worker.Job, error) {
	j := &worker.Job{
		ID: v.ID, Queue: v.Queue, Kind: v.Kind, Key: v.Key, State: worker.State(v.State), Attempt: v.Attempts, MaxAttempts: v.MaxAttempts,
		EnqueuedAt: localTime(v.EnqueuedAt), RunAt: localTime(v.RunAt), LeaseUntil: localTime(v.LeaseUntil),
		Worker: v.Worker, StartedAt: localTime(v.StartedAt), DiedAt: localTime(v.DiedAt), LastError: v.LastError,
		UniqueKey: v.UniqueKey, UniqueAfterFinish: v.UniqueAfterFinish,
		Headers: v.Headers, FinishedAt: localTime(v.FinishedAt),
	}
	if p := v.Progress; p != nil {
		j.Progress = &worker.Progress{Percent: p.Percent, Message: p.Message, UpdatedAt: p.UpdatedAt.Local()}
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
	if j.Payload, err = fromBytes(v.Payload, v.PayloadBase64); err != nil {
		return nil, fmt.Errorf("job %q has a bad payload_base64: %w", v.ID, err)
	}
	if j.Result, err = fromBytes(v.Result, v.ResultBase64); err != nil {
		return nil, fmt.Errorf("job %q has a bad result_base64: %w", v.ID, err)
	}
	return j, nil
}

// fromBytes is the inverse of BytesOf; nil when neither is present.
func fromBytes(raw json.RawMessage, b64 *string) ([]byte, error) {
	switch {
	case b64 != nil:
		return base64.StdEncoding.DecodeString(*b64)
	case len(raw) > 0:
		return []byte(raw), nil
	}
	return nil, nil
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

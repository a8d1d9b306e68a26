package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker"
)

// jobView is a job as the API shows it.
type jobView struct {
	ID    string `json:"id"`
	Queue string `json:"queue"`
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
	LeaseUntil        *time.Time `json:"lease_until,omitempty"`
	DiedAt            *time.Time `json:"died_at,omitempty"`
	LastError         string     `json:"last_error,omitempty"`
	// Payload holds the payload when it is compact JSON (as the API
	// stores the payloads it is given); PayloadBase64 holds any other,
	// byte for byte. Exactly one is present.
	Payload       json.RawMessage `json:"payload,omitempty"`
	PayloadBase64 *string         `json:"payload_base64,omitempty"`
}

func viewJob(j *worker.Job) jobView {
	v := jobView{
		ID: j.ID, Queue: j.Queue, State: string(j.State), Attempts: j.Attempt, MaxAttempts: j.MaxAttempts,
		EnqueuedAt: timeView(j.EnqueuedAt), RunAt: timeView(j.RunAt), LeaseUntil: timeView(j.LeaseUntil),
		DiedAt: timeView(j.DiedAt), LastError: j.LastError,
		Priority: j.Priority.String(), UniqueKey: j.UniqueKey, UniqueAfterFinish: j.UniqueAfterFinish,
	}
	if j.Timeout > 0 {
		v.Timeout = j.Timeout.String()
	}
	if j.UniqueFor > 0 {
		v.UniqueFor = j.UniqueFor.String()
	}
	if compactJSON(j.Payload) {
		v.Payload = j.Payload
	} else {
		s := base64.StdEncoding.EncodeToString(j.Payload)
		v.PayloadBase64 = &s
	}
	return v
}

// compactJSON reports whether p is UTF-8 JSON with no white space outside
// strings: a payload the API can show as JSON and a client can read back
// byte for byte.
func compactJSON(p []byte) bool {
	if len(p) == 0 || !utf8.Valid(p) || !json.Valid(p) {
		return false
	}
	var buf bytes.Buffer
	return json.Compact(&buf, p) == nil && bytes.Equal(buf.Bytes(), p)
}

func timeView(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// writeJSON writes v as the body with status; 204 has no body. HTML
// characters are not escaped, so a JSON payload comes back as it went in.
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do then
}

package logjob_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/seed-53d105c9/courier/handlers/logjob"
	"github.com/seed-53d105c9/courier/worker"
)

// recorder is a slog.Handler that keeps the records it is given.
type recorder struct {
	level slog.Level // lowest level enabled

	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { panic("not used") }
func (r *recorder) WithGroup(string) slog.Handler      { panic("not used") }

func (r *recorder) all() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]slog.Record(nil), r.records...)
}

// attrs returns a record's attributes by key.
func attrs(rec slog.Record) map[string]slog.Value {
	m := make(map[string]slog.Value)
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value
		return true
	})
	return m
}

func newJob(payload string) *worker.Job {
	return &worker.Job{ID: "j1", Queue: "q", Payload: []byte(payload), Attempt: 2}
}

// handle builds a handler logging to a recorder that enables level and
// above, runs job through it and returns the records.
func handle(t *testing.T, level slog.Level, s logjob.Settings, job *worker.Job) []slog.Record {
	t.Helper()
	rec := &recorder{level: level}
	h, err := logjob.New(slog.New(rec), s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := h.Handle(t.Context(), job); err != nil {
		t.Fatalf("Handle = %v; want nil", err)
	}
	return rec.all()
}

func TestLevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level string
		want  slog.Level
	}{
		{"", slog.LevelInfo},
		{"debug", slog.LevelDebug},
		{"info", slog.LevelInfo},
		{"warn", slog.LevelWarn},
		{"error", slog.LevelError},
		{"WARN", slog.LevelWarn},
	}
	for _, tt := range tests {
		t.Run("level="+tt.level, func(t *testing.T) {
			t.Parallel()
			recs := handle(t, slog.LevelDebug, logjob.Settings{Level: tt.level}, newJob(`{"a":1}`))
			if len(recs) != 1 {
				t.Fatalf("got %d records; want 1", len(recs))
			}
			r := recs[0]
			if r.Level != tt.want || r.Message != "job" {
				t.Errorf("record = %s %q; want %s \"job\"", r.Level, r.Message, tt.want)
			}
			a := attrs(r)
			if a["queue"].String() != "q" || a["id"].String() != "j1" || a["attempt"].Int64() != 2 {
				t.Errorf("queue, id, attempt = %v, %v, %v; want q, j1, 2", a["queue"], a["id"], a["attempt"])
			}
			if got := a["payload"].String(); got != `{"a":1}` {
				t.Errorf("payload = %q; want {\"a\":1}", got)
			}
			if _, ok := a["payload_truncated"]; ok {
				t.Error("a short payload is marked truncated")
			}
		})
	}
}

func TestBelowLoggerLevel(t *testing.T) {
	t.Parallel()
	recs := handle(t, slog.LevelInfo, logjob.Settings{Level: "debug"}, newJob("x"))
	if len(recs) != 0 {
		t.Fatalf("got %d records from a debug handler on an info logger; want 0", len(recs))
	}
}

func TestPayload(t *testing.T) {
	t.Parallel()
	binary := string([]byte{0xff, 0x00, 0xfe, 0x01, 0x02})
	tests := []struct {
		name     string
		limit    int
		payload  string
		want     string // logged payload
		base64   bool
		truncate bool
	}{
		{name: "empty", payload: "", want: ""},
		{name: "at the limit", limit: 3, payload: "abc", want: "abc"},
		{name: "over the limit", limit: 3, payload: "abcdef", want: "abc", truncate: true},
		{name: "default limit", payload: strings.Repeat("x", 300), want: strings.Repeat("x", 256), truncate: true},
		{name: "cut inside a character", limit: 2, payload: "aé!", want: "a", truncate: true},
		{name: "binary", payload: binary, want: base64.StdEncoding.EncodeToString([]byte(binary)), base64: true},
		{name: "binary over the limit", limit: 2, payload: binary, want: base64.StdEncoding.EncodeToString([]byte(binary[:2])), base64: true, truncate: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			recs := handle(t, slog.LevelDebug, logjob.Settings{PayloadBytes: tt.limit}, newJob(tt.payload))
			if len(recs) != 1 {
				t.Fatalf("got %d records; want 1", len(recs))
			}
			a := attrs(recs[0])
			if got := a["payload"].String(); got != tt.want {
				t.Errorf("payload = %q; want %q", got, tt.want)
			}
			if enc, ok := a["payload_encoding"]; ok != tt.base64 || ok && enc.String() != "base64" {
				t.Errorf("payload_encoding = %v (present %t); want present %t", enc, ok, tt.base64)
			}
			trunc, ok := a["payload_truncated"]
			if ok != tt.truncate || ok && !trunc.Bool() {
				t.Errorf("payload_truncated = %v (present %t); want present %t", trunc, ok, tt.truncate)
			}
			if size, ok := a["payload_size"]; ok != tt.truncate || ok && size.Int64() != int64(len(tt.payload)) {
				t.Errorf("payload_size = %v (present %t); want %d (present %t)", size, ok, len(tt.payload), tt.truncate)
			}
		})
	}
}

func TestNewInvalid(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	tests := []struct {
		name   string
		logger *slog.Logger
		s      logjob.Settings
		want   []string // one message prefix per problem
	}{
		{name: "nil logger", s: logjob.Settings{}, want: []string{"logger: is nil"}},
		{name: "unknown level", logger: logger, s: logjob.Settings{Level: "verbose"},
			want: []string{`level: must be one of debug, info, warn, error (got "verbose")`}},
		{name: "negative payload_bytes", logger: logger, s: logjob.Settings{PayloadBytes: -1},
			want: []string{"payload_bytes: must not be negative (got -1)"}},
		{name: "payload_bytes too large", logger: logger, s: logjob.Settings{PayloadBytes: 65537},
			want: []string{"payload_bytes: must be at most 65536 (got 65537)"}},
		{name: "every problem", s: logjob.Settings{Level: "loud", PayloadBytes: -5},
			want: []string{"logger: ", "level: ", "payload_bytes: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := logjob.New(tt.logger, tt.s)
			if err == nil {
				t.Fatalf("New = %v, nil; want an error", h)
			}
			var errs []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			} else {
				errs = []error{err}
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("New: %d problems (%v); want %d", len(errs), err, len(tt.want))
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tt.want[i]) {
					t.Errorf("problem %d = %q; want prefix %q", i, e, tt.want[i])
				}
			}
		})
	}
}

func TestNewValidEdges(t *testing.T) {
	t.Parallel()
	for _, s := range []logjob.Settings{{PayloadBytes: 1}, {PayloadBytes: 65536}, {Level: "Error"}} {
		if _, err := logjob.New(slog.New(slog.DiscardHandler), s); err != nil {
			t.Errorf("New(%+v) = %v; want nil", s, err)
		}
	}
}

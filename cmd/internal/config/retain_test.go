package config

import (
	"log/slog"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// TestRetainCompletedAndMaxResult: queues.<name>.retain_completed reaches
// the queue's options and jobs.max_result_bytes the library's Config,
// from the file and the environment; left out, no queue retains and the
// result limit is the library's default.
func TestRetainCompletedAndMaxResult(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{
		File: writeFile(t, "jobs:\n  max_result_bytes: 1024\n"+minimal+`
    retain_completed: {count: 1000, age: 24h}
  audit:
    handler: log
`),
		Environ: []string{"COURIER_QUEUES__AUDIT__RETAIN_COMPLETED__COUNT=5"},
	})
	if err != nil {
		t.Fatal(err)
	}
	emails, audit := cfg.Queues["emails"], cfg.Queues["audit"]
	if o := emails.options(); o.RetainCompleted != (worker.Retention{Count: 1000, Age: 24 * time.Hour}) {
		t.Errorf("emails: retain %+v", o.RetainCompleted)
	}
	if o := audit.options(); o.RetainCompleted != (worker.Retention{Count: 5}) {
		t.Errorf("audit: retain %+v", o.RetainCompleted)
	}
	if w := cfg.Worker(nil); w.MaxResultBytes != 1024 {
		t.Errorf("worker MaxResultBytes %d, want 1024", w.MaxResultBytes)
	}
	if _, err := cfg.Registry(slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("registry: %v", err)
	}

	for _, tt := range []struct {
		file string
		want int
	}{
		{minimal, worker.MaxResultBytesDefault},
		{"jobs:\n  max_payload_bytes: 1000\n" + minimal, worker.MaxResultBytesDefault}, // a result may be larger than a payload
		{"jobs:\n  max_result_bytes: 0\n" + minimal, 0},                                // the library's default
	} {
		cfg, err := Load(Sources{File: writeFile(t, tt.file)})
		if err != nil {
			t.Fatalf("%q: %v", tt.file, err)
		}
		q := cfg.Queues["emails"]
		if o := q.options(); o.RetainCompleted != (worker.Retention{}) {
			t.Errorf("defaults: retain %+v, want none", o.RetainCompleted)
		}
		if w := cfg.Worker(nil); w.MaxResultBytes != tt.want {
			t.Errorf("%q: worker MaxResultBytes %d, want %d", tt.file, w.MaxResultBytes, tt.want)
		}
	}
}

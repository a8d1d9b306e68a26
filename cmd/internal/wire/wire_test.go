package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// through sends v through JSON as a server writes it and a client reads
// it back.
func through[T any](t *testing.T, v T) T {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, v); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	var back T
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return back
}

// at is a time in the local zone, as a worker.Client gives them.
func at(sec int, nsec int) time.Time {
	return time.Date(2026, 3, 4, 5, 6, sec, nsec, time.UTC).Local()
}

// TestJobRoundTrip: a job sent through JobOf, JSON and ToWorker comes
// back equal, its payload byte for byte whether it is JSON or not.
func TestJobRoundTrip(t *testing.T) {
	t.Parallel()
	full := worker.Job{
		ID: "order-1", Queue: "emails", Kind: "email.send", Key: "acme", State: worker.StateActive, Attempt: 2, MaxAttempts: 5, Timeout: 90 * time.Second,
		EnqueuedAt: at(1, 0), RunAt: at(2, 5000), LeaseUntil: at(3, 123456789), StartedAt: at(4, 1000),
		Worker: "host-1:42", DiedAt: at(5, 0), LastError: "boom <b>",
		Priority: worker.PriorityHigh, UniqueKey: "k", UniqueFor: time.Hour, UniqueAfterFinish: true,
		Headers:    map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tenant": "a <b>"},
		Progress:   &worker.Progress{Percent: 42.5, Message: "step 2 of 4 <b>", UpdatedAt: at(6, 7000000)},
		Result:     []byte(`{"sent":true}`),
		FinishedAt: at(7, 8000000),
	}
	tests := []struct {
		name    string
		payload []byte
		base64  bool
	}{
		{"compact JSON", []byte(`{"to":"ada@example.com","html":"<b>hi</b>"}`), false},
		{"JSON string", []byte(`"hello"`), false},
		{"JSON with white space", []byte(`{ "a": 1 }`), true},
		{"binary", []byte{0, 1, 0xff, 'x'}, true},
		{"invalid UTF-8 in a string", []byte("\"\xff\""), true},
		{"empty", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := full
			j.Payload = tt.payload
			v := through(t, JobOf(&j))
			if (v.PayloadBase64 != nil) != tt.base64 || (len(v.Payload) > 0) == tt.base64 {
				t.Errorf("payload %s, payload_base64 %v: want base64 %v", v.Payload, v.PayloadBase64, tt.base64)
			}
			back, err := v.ToWorker()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Payload, tt.payload) {
				t.Errorf("payload %q, want %q", back.Payload, tt.payload)
			}
			back.Payload = j.Payload
			if !reflect.DeepEqual(*back, j) {
				t.Errorf("round trip\n got %+v\nwant %+v", *back, j)
			}
		})
	}

	// The zero times and unset fields are left out.
	data, err := json.Marshal(JobOf(&worker.Job{ID: "x", Queue: "q", State: worker.StateReady, Payload: []byte("1")}))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"x","queue":"q","state":"ready","attempts":0,"priority":"normal","payload":1}`; string(data) != want {
		t.Errorf("minimal job %s, want %s", data, want)
	}
}

// TestJobResult: a completed job's result is shown as its payload is,
// compact JSON as is and any other bytes in base64, and comes back byte
// for byte; a job without one shows neither field.
func TestJobResult(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		result []byte
		json   string // the result members of the job's JSON
	}{
		{[]byte(`{"n":1}`), `"result":{"n":1}`},
		{[]byte(`"<ok>"`), `"result":"<ok>"`},
		{[]byte(`{ "n": 1 }`), `"result_base64":"eyAibiI6IDEgfQ=="`},
		{[]byte{0, 0xff}, `"result_base64":"AP8="`},
		{nil, ``},
	} {
		j := worker.Job{ID: "x", Queue: "q", State: worker.StateCompleted, Payload: []byte("1"), Result: tt.result,
			FinishedAt: at(1, 0)}
		var buf bytes.Buffer
		if err := Encode(&buf, JobOf(&j)); err != nil {
			t.Fatal(err)
		}
		want := `{"id":"x","queue":"q","state":"completed","attempts":0,"priority":"normal","payload":1,` + tt.json
		if tt.json != "" {
			want += ","
		}
		want += `"finished_at":"2026-03-04T05:06:01Z"}` + "\n"
		if buf.String() != want {
			t.Errorf("result %q: %s, want %s", tt.result, buf.String(), want)
		}
		v := through(t, JobOf(&j))
		back, err := v.ToWorker()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.Result, tt.result) || !back.FinishedAt.Equal(j.FinishedAt) {
			t.Errorf("result %q came back as %q, finished %s", tt.result, back.Result, back.FinishedAt)
		}
	}

	// Kind, progress and headers, as the API writes them.
	data, err := json.Marshal(JobOf(&worker.Job{ID: "x", Queue: "q", Kind: "report:build", State: worker.StateActive, Payload: []byte("1"),
		Headers:  map[string]string{"b": "2", "a": "1"},
		Progress: &worker.Progress{Percent: 50, Message: "half", UpdatedAt: at(2, 0)}}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"x","queue":"q","kind":"report:build","state":"active","attempts":0,"priority":"normal","payload":1,` +
		`"headers":{"a":"1","b":"2"},"progress":{"percent":50,"message":"half","updated_at":"2026-03-04T05:06:02Z"}}`
	if string(data) != want {
		t.Errorf("job %s, want %s", data, want)
	}
}

// TestJobFromAServerItCannotBe: ToWorker refuses what no server writes.
func TestJobFromAServerItCannotBe(t *testing.T) {
	t.Parallel()
	bad := "%%%"
	for _, v := range []Job{
		{ID: "a", Timeout: "soon"},
		{ID: "b", UniqueFor: "1 hour"},
		{ID: "c", Priority: "urgent"},
		{ID: "d", PayloadBase64: &bad},
		{ID: "f", ResultBase64: &bad},
	} {
		if _, err := v.ToWorker(); err == nil {
			t.Errorf("%+v: no error", v)
		}
	}
	// A server before priorities wrote none: normal.
	j, err := (&Job{ID: "e"}).ToWorker()
	if err != nil || j.Priority != worker.PriorityNormal {
		t.Errorf("no priority: %v %v", j, err)
	}
}

// TestQueueRoundTrip: a queue's stats and fleet sent through QueueOf and
// JSON come back as they were; the queue's rate limit is the leader's.
func TestQueueRoundTrip(t *testing.T) {
	t.Parallel()
	stats := admin.QueueStats{Scheduled: 1, Ready: 2, Active: 3, Dead: 4, Completed: 5, Paused: true}
	fleet := admin.Fleet{Leader: "b", Processes: []admin.FleetProcess{
		{ID: "a", Concurrency: 5, RateLimit: worker.RateLimit{N: 10, Per: time.Second}, ReportedAt: at(1, 0).UTC()},
		{ID: "b", Concurrency: 20, RateLimit: worker.RateLimit{N: 100, Per: time.Minute}, Leader: true, ReportedAt: at(2, 500).UTC()},
		{ID: "c", Concurrency: 1, ReportedAt: at(3, 0).UTC(), Kinds: []string{"", "email.send"}},
	}, Partitions: 3, PartitionLeaders: []string{"b", "a", ""}}
	v := through(t, QueueOf("emails", stats, fleet))
	if v.Name != "emails" || v.Concurrency != 26 || v.Leader == nil || *v.Leader != "b" ||
		v.RateLimit == nil || *v.RateLimit != "100 per 1m0s" || v.Workers[2].RateLimit != nil {
		t.Errorf("queue %+v", v)
	}
	if got := v.Stats(); got != stats {
		t.Errorf("stats %+v, want %+v", got, stats)
	}
	if got := v.Fleet(); !reflect.DeepEqual(got, fleet) {
		t.Errorf("fleet\n got %+v\nwant %+v", got, fleet)
	}

	// No fleet: no leader, no limit, an empty list rather than null.
	data, err := json.Marshal(QueueOf("idle", admin.QueueStats{}, admin.Fleet{}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"idle","paused":false,"jobs":{"scheduled":0,"ready":0,"active":0,"dead":0,"completed":0,"cancelled":0},"leader":null,"concurrency":0,"rate_limit":null,"workers":[],"partitions":1}`
	if string(data) != want {
		t.Errorf("idle queue %s, want %s", data, want)
	}
	var idle Queue
	if err := json.Unmarshal(data, &idle); err != nil {
		t.Fatal(err)
	}
	if f := idle.Fleet(); f.Leader != "" || len(f.Processes) != 0 {
		t.Errorf("idle fleet %+v", f)
	}
}

// TestPageOf: the library's cursor becomes next_cursor, null at the end.
func TestPageOf(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(PageOf(nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jobs":[],"next_cursor":null}`; string(data) != want {
		t.Errorf("last page %s, want %s", data, want)
	}
	p := PageOf([]*worker.Job{{ID: "a", Queue: "q", Payload: []byte("{}")}}, "c1")
	if len(p.Jobs) != 1 || p.Jobs[0].ID != "a" || p.NextCursor == nil || *p.NextCursor != "c1" {
		t.Errorf("page %+v", p)
	}
}

// TestCodeOf: the library's errors, wrapped or not, map to their codes,
// and each code to its status.
func TestCodeOf(t *testing.T) {
	t.Parallel()
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: &timeoutError{}}
	tests := []struct {
		err  error
		want Code
	}{
		{&worker.ValidationError{Field: "Queue", Reason: "empty"}, CodeInvalidField},
		{fmt.Errorf("enqueue: %w", &worker.ValidationError{Field: "specs[1].Delay", Reason: "negative"}), CodeInvalidField},
		{fmt.Errorf("get: %w", worker.ErrNotFound), CodeNotFound},
		{worker.ErrDuplicate, CodeConflict},
		{worker.ErrUniqueKeyHeld, CodeConflict},
		{fmt.Errorf("cancel: %w", worker.ErrJobDead), CodeConflict},
		{fmt.Errorf("enqueue: %w", worker.ErrRedisOOM), CodeUnavailable},
		{fmt.Errorf("stats: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), CodeUnavailable},
		{timeout, CodeUnavailable},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), CodeUnavailable},
		{fmt.Errorf("get: %w", context.Canceled), CodeInternal},
		{fmt.Errorf("forget: %w: 3 dead jobs", admin.ErrQueueInUse), CodeConflict},
		{errors.New("something else"), CodeInternal},
		{fmt.Errorf("courier API: %w", coded(CodeRateLimited)), CodeRateLimited},
		{&worker.NotReplicatedError{Queue: "q", Want: 1}, CodeNotReplicated},
		// Stored, though the wait's connection was lost: not unavailable.
		{fmt.Errorf("enqueue: %w", &worker.NotReplicatedError{Queue: "q", Want: 1, Err: timeout}), CodeNotReplicated},
	}
	for _, tt := range tests {
		if got := CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
	if CodeUnavailable.Status() != http.StatusServiceUnavailable || Code("nonsense").Status() != http.StatusInternalServerError {
		t.Error("Status")
	}
	for _, c := range Codes() {
		if c != CodeInternal && c.Status() == http.StatusInternalServerError {
			t.Errorf("code %s has no status", c)
		}
	}
}

// coded is an error that carries its code, as the API client's do.
type coded Code

func (c coded) Error() string   { return string(c) }
func (c coded) ErrorCode() Code { return Code(c) }

type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// TestTriageRoundTrip: a triage result sent through TriageOf and JSON
// comes back as it was; nothing matched is an empty sample, not null.
func TestTriageRoundTrip(t *testing.T) {
	t.Parallel()
	for _, r := range []admin.TriageResult{
		{Matched: 3, Changed: 2, Sample: []string{"a", "b", "c"}, Next: "dDox"},
		{Matched: 1, Changed: 1, Sample: []string{"a"}},
	} {
		v := through(t, TriageOf(admin.TriageRequeue, false, r))
		if got := v.Result(); !reflect.DeepEqual(got, r) {
			t.Errorf("round trip %+v, want %+v", got, r)
		}
	}
	var buf bytes.Buffer
	if err := Encode(&buf, TriageOf(admin.TriagePurge, true, admin.TriageResult{})); err != nil {
		t.Fatal(err)
	}
	if want := `{"action":"purge","dry_run":true,"matched":0,"changed":0,"sample":[],"next_cursor":null}` + "\n"; buf.String() != want {
		t.Errorf("nothing matched: %s, want %s", buf.String(), want)
	}
}

// TestKeyRoundTrip: a key's stats sent through KeyOf, JSON and Stats come
// back equal; the queue's cap shows as null, a weight of the default as 1.
func TestKeyRoundTrip(t *testing.T) {
	t.Parallel()
	list := admin.KeyList{Total: 7, Keys: []admin.KeyStats{
		{Key: "acme", Waiting: 12, Ready: 10, Running: 3, Limits: admin.KeyLimits{Concurrency: 3, Weight: 5, RateLimit: &worker.RateLimit{N: 10, Per: time.Second}}, AtCap: true},
		{Key: "globex", Waiting: 4, Running: 0, Limits: admin.KeyLimits{Concurrency: 0, Weight: 1, RateLimit: &worker.RateLimit{}}, LimitedUntil: at(9, 123000000)},
		{Key: "initech <b>", Waiting: 1, Running: 1, Limits: admin.KeyLimits{Concurrency: -1, Weight: 2}},
	}}
	v := through(t, KeyListOf(list))
	if back, err := v.List(); err != nil || !reflect.DeepEqual(back, list) {
		t.Errorf("round trip\n got %+v, %v\nwant %+v", back, err, list)
	}
	if r := v.Keys[1].RateLimit; r == nil || *r != "" {
		t.Errorf("no rate limit of its own shows as %v, want \"\"", r)
	}
	data, err := json.Marshal(KeyOf(admin.KeyStats{Key: "k", Limits: admin.DefaultKeyLimits}))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"key":"k","waiting":0,"ready":0,"running":0,"concurrency":null,"weight":1,"rate_limit":null,"at_cap":false}`; string(data) != want {
		t.Errorf("a key of the defaults %s, want %s", data, want)
	}
	data, err = json.Marshal(KeyListOf(admin.KeyList{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"keys":[],"total":0}`; string(data) != want {
		t.Errorf("no keys %s, want %s", data, want)
	}
	if _, err := (&Key{Key: "k", RateLimit: new("lots")}).Stats(); err == nil {
		t.Error("a rate limit a server could not have written was read")
	}
}

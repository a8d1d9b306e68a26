package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// The job rules have one owner, the library (worker.Client.EnqueueMany);
// the CLI's flags and the HTTP API's JSON only map their names to its
// fields. TestEnqueueParity holds the four ways in to that: each case is
// sent through the Go client, courier enqueue on Redis, courier enqueue
// --api, and a raw POST, and all four must accept it, or all refuse it
// naming the same field, each in its own vocabulary.

// parityNames maps a field of worker.JobSpec, as the library names it in
// a *worker.ValidationError, to its JSON member and its flag. Written out
// here, apart from the tables of the API and the CLI, so that the test
// checks those.
var parityNames = map[string]struct{ json, flag string }{
	"Queue":               {"queue", "--queue"},
	"ID":                  {"id", "--id"},
	"Kind":                {"kind", "--kind"},
	"Key":                 {"key", "--key"},
	"Payload":             {"payload", "--payload"},
	"Delay":               {"delay", "--delay"},
	"RunAt":               {"run_at", "--at"},
	"MaxAttempts":         {"max_attempts", "--max-attempts"},
	"Timeout":             {"timeout", "--timeout"},
	"Priority":            {"priority", "--priority"},
	"UniqueKey":           {"unique_key", "--unique-key"},
	"UniqueFor":           {"unique_for", "--unique-for"},
	"UniqueAfterFinish":   {"unique_after_finish", "--unique-after-finish"},
	"Headers":             {"headers", "--header"},
	"Durability.Replicas": {"durability.replicas", "--replicas"},
	"Durability.Timeout":  {"durability.timeout", "--replicas-timeout"},
}

// parityCase is one job, written in each vocabulary. The queue is the
// case's own when set, else one per path (so that a job with an id is
// new on each); want is the Go field every path must name, "" when every
// path must accept the job.
type parityCase struct {
	name  string
	queue string
	spec  worker.JobSpec
	flags []string
	body  string
	want  string
}

// parityCases is the table: each bound just outside (and some just
// inside) its limit, and each rule of a job.
func parityCases() []parityCase {
	limit := worker.MaxPayloadBytesDefault
	over := strings.Repeat("p", limit+1)
	full := strings.Repeat("p", limit-2) // as a JSON string, with its quotes: limit bytes
	longID := strings.Repeat("i", worker.MaxIDLen)
	longKind := strings.Repeat("k", worker.MaxKindLen)
	far := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	soon := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	before1970 := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)
	year := worker.MaxUniqueFor
	headers := func(n, size int) map[string]string {
		h := make(map[string]string, n)
		for i := range n {
			h[fmt.Sprintf("h%02d", i)] = strings.Repeat("v", size)
		}
		return h
	}
	return []parityCase{
		{name: "max attempts 1000", spec: worker.JobSpec{MaxAttempts: 1000},
			flags: []string{"--max-attempts", "1000"}, body: `{"max_attempts": 1000}`},
		{name: "max attempts 1001", spec: worker.JobSpec{MaxAttempts: 1001},
			flags: []string{"--max-attempts", "1001"}, body: `{"max_attempts": 1001}`, want: "MaxAttempts"},
		{name: "max attempts -1", spec: worker.JobSpec{MaxAttempts: -1},
			flags: []string{"--max-attempts", "-1"}, body: `{"max_attempts": -1}`, want: "MaxAttempts"},
		{name: "timeout 168h", spec: worker.JobSpec{Timeout: 168 * time.Hour},
			flags: []string{"--timeout", "168h"}, body: `{"timeout": "168h"}`},
		{name: "timeout over 168h", spec: worker.JobSpec{Timeout: 168*time.Hour + time.Millisecond},
			flags: []string{"--timeout", "168h0m0.001s"}, body: `{"timeout": "168h0m0.001s"}`, want: "Timeout"},
		{name: "timeout under 1ms", spec: worker.JobSpec{Timeout: 500 * time.Microsecond},
			flags: []string{"--timeout", "500us"}, body: `{"timeout": "500us"}`, want: "Timeout"},
		{name: "negative timeout", spec: worker.JobSpec{Timeout: -time.Second},
			flags: []string{"--timeout", "-1s"}, body: `{"timeout": "-1s"}`, want: "Timeout"},
		{name: "negative delay", spec: worker.JobSpec{Delay: -time.Second},
			flags: []string{"--delay", "-1s"}, body: `{"delay": "-1s"}`, want: "Delay"},
		{name: "delay at the horizon", spec: worker.JobSpec{Delay: worker.MaxScheduleAheadDefault},
			flags: []string{"--delay", "8760h"}, body: `{"delay": "8760h"}`},
		{name: "delay beyond the horizon", spec: worker.JobSpec{Delay: worker.MaxScheduleAheadDefault + time.Second},
			flags: []string{"--delay", "8760h1s"}, body: `{"delay": "8760h1s"}`, want: "Delay"},
		{name: "run_at beyond the horizon", spec: worker.JobSpec{RunAt: far},
			flags: []string{"--at", far.Format(time.RFC3339)}, body: `{"run_at": "` + far.Format(time.RFC3339) + `"}`, want: "RunAt"},
		{name: "run_at before 1970", spec: worker.JobSpec{RunAt: before1970},
			flags: []string{"--at", before1970.Format(time.RFC3339)}, body: `{"run_at": "` + before1970.Format(time.RFC3339) + `"}`, want: "RunAt"},
		{name: "run_at and delay together", spec: worker.JobSpec{RunAt: soon, Delay: time.Minute},
			flags: []string{"--at", soon.Format(time.RFC3339), "--delay", "1m"},
			body:  `{"run_at": "` + soon.Format(time.RFC3339) + `", "delay": "1m"}`, want: "RunAt"},
		{name: "id of 256 bytes", spec: worker.JobSpec{ID: longID},
			flags: []string{"--id", longID}, body: `{"id": "` + longID + `"}`},
		{name: "id of 257 bytes", spec: worker.JobSpec{ID: longID + "i"},
			flags: []string{"--id", longID + "i"}, body: `{"id": "` + longID + `i"}`, want: "ID"},
		{name: "id with a space", spec: worker.JobSpec{ID: "a b"},
			flags: []string{"--id", "a b"}, body: `{"id": "a b"}`, want: "ID"},
		{name: "id with a control character", spec: worker.JobSpec{ID: "a\x07b"},
			flags: []string{"--id", "a\x07b"}, body: `{"id": "a\u0007b"}`, want: "ID"},
		{name: "queue name with a brace", queue: "a{b}", want: "Queue"},
		{name: "queue name of 129 characters", queue: strings.Repeat("q", worker.MaxQueueNameLen+1), want: "Queue"},
		{name: "unknown priority", spec: worker.JobSpec{Priority: worker.PriorityHigh + 1},
			flags: []string{"--priority", "urgent"}, body: `{"priority": "urgent"}`, want: "Priority"},
		{name: "kind", spec: worker.JobSpec{Kind: "email.send"},
			flags: []string{"--kind", "email.send"}, body: `{"kind": "email.send"}`},
		{name: "kind of 128 bytes", spec: worker.JobSpec{Kind: longKind},
			flags: []string{"--kind", longKind}, body: `{"kind": "` + longKind + `"}`},
		{name: "kind of 129 bytes", spec: worker.JobSpec{Kind: longKind + "k"},
			flags: []string{"--kind", longKind + "k"}, body: `{"kind": "` + longKind + `k"}`, want: "Kind"},
		{name: "key", spec: worker.JobSpec{Key: "acme"},
			flags: []string{"--key", "acme"}, body: `{"key": "acme"}`},
		{name: "key with a slash", spec: worker.JobSpec{Key: "tenant/42"},
			flags: []string{"--key", "tenant/42"}, body: `{"key": "tenant/42"}`},
		{name: "key of 256 bytes", spec: worker.JobSpec{Key: longID},
			flags: []string{"--key", longID}, body: `{"key": "` + longID + `"}`},
		{name: "key of 257 bytes", spec: worker.JobSpec{Key: longID + "k"},
			flags: []string{"--key", longID + "k"}, body: `{"key": "` + longID + `k"}`, want: "Key"},
		{name: "key with a space", spec: worker.JobSpec{Key: "a b"},
			flags: []string{"--key", "a b"}, body: `{"key": "a b"}`, want: "Key"},
		{name: "key with a control character", spec: worker.JobSpec{Key: "a\x07b"},
			flags: []string{"--key", "a\x07b"}, body: `{"key": "a\u0007b"}`, want: "Key"},
		{name: "kind with a space", spec: worker.JobSpec{Kind: "email send"},
			flags: []string{"--kind", "email send"}, body: `{"kind": "email send"}`, want: "Kind"},
		{name: "kind with a non-ASCII letter", spec: worker.JobSpec{Kind: "café"},
			flags: []string{"--kind", "café"}, body: `{"kind": "café"}`, want: "Kind"},
		{name: "the kind's reserved header", spec: worker.JobSpec{Headers: map[string]string{"courier.kind": "email.send"}},
			flags: []string{"--header", "courier.kind=email.send"}, body: `{"headers": {"courier.kind": "email.send"}}`, want: `Headers["courier.kind"]`},
		{name: "a kind and 32 headers", spec: worker.JobSpec{Kind: "k", Headers: headers(worker.MaxHeaders, 1)},
			flags: append([]string{"--kind", "k"}, headerFlags(headers(worker.MaxHeaders, 1))...),
			body:  `{"kind": "k", ` + strings.TrimPrefix(headerBody(headers(worker.MaxHeaders, 1)), "{"), want: "Headers"},
		{name: "32 headers", spec: worker.JobSpec{Headers: headers(worker.MaxHeaders, 1)},
			flags: headerFlags(headers(worker.MaxHeaders, 1)), body: headerBody(headers(worker.MaxHeaders, 1))},
		{name: "33 headers", spec: worker.JobSpec{Headers: headers(worker.MaxHeaders+1, 1)},
			flags: headerFlags(headers(worker.MaxHeaders+1, 1)), body: headerBody(headers(worker.MaxHeaders+1, 1)), want: "Headers"},
		{name: "header value of 1025 bytes", spec: worker.JobSpec{Headers: map[string]string{"big": strings.Repeat("v", 1025)}},
			flags: []string{"--header", "big=" + strings.Repeat("v", 1025)}, body: `{"headers": {"big": "` + strings.Repeat("v", 1025) + `"}}`, want: `Headers["big"]`},
		{name: "header name of 65 bytes", spec: worker.JobSpec{Headers: map[string]string{strings.Repeat("n", 65): "x"}},
			flags: []string{"--header", strings.Repeat("n", 65) + "=x"}, body: `{"headers": {"` + strings.Repeat("n", 65) + `": "x"}}`,
			want: `Headers["` + strings.Repeat("n", 64) + `"…]`},
		{name: "header name in capitals", spec: worker.JobSpec{Headers: map[string]string{"Tenant": "a"}},
			flags: []string{"--header", "Tenant=a"}, body: `{"headers": {"Tenant": "a"}}`, want: `Headers["Tenant"]`},
		{name: "headers over 8 KiB in all", spec: worker.JobSpec{Headers: headers(9, 1000)},
			flags: headerFlags(headers(9, 1000)), body: headerBody(headers(9, 1000)), want: "Headers"},
		{name: "payload at the limit", spec: worker.JobSpec{Payload: []byte(`"` + full + `"`)},
			flags: []string{"--payload", `"` + full + `"`}, body: `{"payload": "` + full + `"}`},
		{name: "payload over the limit", spec: worker.JobSpec{Payload: []byte(over)},
			flags: []string{"--payload", over}, body: `{"payload_base64": "` + base64.StdEncoding.EncodeToString([]byte(over)) + `"}`, want: "Payload"},
		{name: "unique_for of a year", spec: worker.JobSpec{UniqueKey: "k", UniqueFor: year},
			flags: []string{"--unique-key", "k", "--unique-for", "8760h"}, body: `{"unique_key": "k", "unique_for": "8760h"}`},
		{name: "unique_for over a year", spec: worker.JobSpec{UniqueKey: "k", UniqueFor: year + time.Millisecond},
			flags: []string{"--unique-key", "k", "--unique-for", "8760h0m0.001s"}, body: `{"unique_key": "k", "unique_for": "8760h0m0.001s"}`, want: "UniqueFor"},
		{name: "unique_for under 1ms", spec: worker.JobSpec{UniqueKey: "k", UniqueFor: 500 * time.Microsecond},
			flags: []string{"--unique-key", "k", "--unique-for", "500us"}, body: `{"unique_key": "k", "unique_for": "500us"}`, want: "UniqueFor"},
		{name: "negative unique_for", spec: worker.JobSpec{UniqueKey: "k", UniqueFor: -time.Second},
			flags: []string{"--unique-key", "k", "--unique-for", "-1s"}, body: `{"unique_key": "k", "unique_for": "-1s"}`, want: "UniqueFor"},
		{name: "unique_for without a key", spec: worker.JobSpec{UniqueFor: time.Hour},
			flags: []string{"--unique-for", "1h"}, body: `{"unique_for": "1h"}`, want: "UniqueFor"},
		{name: "unique_after_finish without unique_for", spec: worker.JobSpec{UniqueKey: "k", UniqueAfterFinish: true},
			flags: []string{"--unique-key", "k", "--unique-after-finish"}, body: `{"unique_key": "k", "unique_after_finish": true}`, want: "UniqueAfterFinish"},
		{name: "unique key with a space", spec: worker.JobSpec{UniqueKey: "a b"},
			flags: []string{"--unique-key", "a b"}, body: `{"unique_key": "a b"}`, want: "UniqueKey"},
		{name: "durability of 17 replicas", spec: worker.JobSpec{Durability: worker.Durability{Replicas: 17, Timeout: time.Second}},
			flags: []string{"--replicas", "17", "--replicas-timeout", "1s"}, body: `{"durability": {"replicas": 17, "timeout": "1s"}}`, want: "Durability.Replicas"},
		{name: "durability of -1 replicas", spec: worker.JobSpec{Durability: worker.Durability{Replicas: -1, Timeout: time.Second}},
			flags: []string{"--replicas", "-1", "--replicas-timeout", "1s"}, body: `{"durability": {"replicas": -1, "timeout": "1s"}}`, want: "Durability.Replicas"},
		{name: "durability timeout without replicas", spec: worker.JobSpec{Durability: worker.Durability{Timeout: time.Second}},
			flags: []string{"--replicas-timeout", "1s"}, body: `{"durability": {"timeout": "1s"}}`, want: "Durability.Timeout"},
		{name: "durability replicas without a timeout", spec: worker.JobSpec{Durability: worker.Durability{Replicas: 1}},
			flags: []string{"--replicas", "1", "--replicas-timeout", "0s"}, body: `{"durability": {"replicas": 1}}`, want: "Durability.Timeout"},
		{name: "durability timeout over a minute", spec: worker.JobSpec{Durability: worker.Durability{Replicas: 1, Timeout: time.Minute + time.Millisecond}},
			flags: []string{"--replicas", "1", "--replicas-timeout", "1m0.001s"}, body: `{"durability": {"replicas": 1, "timeout": "1m0.001s"}}`, want: "Durability.Timeout"},
	}
}

func headerFlags(h map[string]string) []string {
	var flags []string
	for name, v := range h {
		flags = append(flags, "--header", name+"="+v)
	}
	return flags
}

func headerBody(h map[string]string) string {
	b, err := json.Marshal(map[string]any{"headers": h})
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return string(b)
}

// parityVerdict is what one path made of a case: the field it named in
// its own vocabulary, "" when it accepted the job.
type parityVerdict struct {
	field string
	note  string // what the path said, for the failure message
}

// TestEnqueueParity: the four ways to enqueue give the same verdict on
// every case of the table, naming the same field.
func TestEnqueueParity(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	base := b.apiServer(t)
	producer, err := worker.NewClient(testkit.Single(t), worker.Config{Prefix: b.prefix})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range parityCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			queue := func(path string) string {
				if tc.queue != "" {
					return tc.queue
				}
				return "parity-" + path
			}
			wantJSON, wantFlag := "", ""
			if tc.want != "" {
				wantJSON, wantFlag = paritySpelling(t, tc.want)
			}
			spec := tc.spec
			spec.Queue = queue("go")
			checks := []struct {
				path, want string
				got        parityVerdict
			}{
				{"Go", tc.want, parityGo(t, producer, spec)},
				{"CLI on Redis", wantFlag, parityCLI(b.run(t, "", "enqueue", append([]string{"--queue", queue("cli"), "--json", "--payload", ""}, tc.flags...)...))},
				{"CLI --api", wantFlag, parityCLI(runCLIStdin(t, t.Context(), "", append([]string{"enqueue", "--api", base, "--token", testAdminToken,
					"--queue", queue("api"), "--json", "--payload", ""}, tc.flags...)...))},
				{"HTTP", wantJSON, parityHTTP(t, base, queue("http"), tc.body)},
			}
			for _, c := range checks {
				if c.got.field != c.want {
					t.Errorf("%s: named %q, want %q (%s)", c.path, c.got.field, c.want, c.got.note)
				}
			}
		})
	}
}

// TestEnqueueGivenZero: a flag or JSON member given the zero value that
// means "left out" in Go (an empty id, max attempts 0, …) is refused
// alike by the CLI on Redis, the CLI through the API and the HTTP API,
// naming it: the way to ask for the default there is to leave it out.
// The Go client, where zero is the only way to leave a field out, takes
// it as the default.
func TestEnqueueGivenZero(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	base := b.apiServer(t)
	cases := []struct {
		name  string
		flags []string
		body  string
		want  string
	}{
		{"empty id", []string{"--id", ""}, `{"id": ""}`, "ID"},
		{"empty kind", []string{"--kind", ""}, `{"kind": ""}`, "Kind"},
		{"empty key", []string{"--key", ""}, `{"key": ""}`, "Key"},
		{"max attempts 0", []string{"--max-attempts", "0"}, `{"max_attempts": 0}`, "MaxAttempts"},
		{"timeout 0", []string{"--timeout", "0s"}, `{"timeout": "0s"}`, "Timeout"},
		{"empty unique key", []string{"--unique-key", ""}, `{"unique_key": ""}`, "UniqueKey"},
		{"unique_for 0", []string{"--unique-key", "k", "--unique-for", "0s"}, `{"unique_key": "k", "unique_for": "0s"}`, "UniqueFor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantJSON, wantFlag := paritySpelling(t, tc.want)
			for path, got := range map[string]parityVerdict{
				"CLI on Redis": parityCLI(b.run(t, "", "enqueue", append([]string{"--queue", "zero", "--json", "--payload", ""}, tc.flags...)...)),
				"CLI --api": parityCLI(runCLIStdin(t, t.Context(), "", append([]string{"enqueue", "--api", base, "--token", testAdminToken,
					"--queue", "zero", "--json", "--payload", ""}, tc.flags...)...)),
			} {
				if got.field != wantFlag {
					t.Errorf("%s: named %q, want %q (%s)", path, got.field, wantFlag, got.note)
				}
			}
			if got := parityHTTP(t, base, "zero", tc.body); got.field != wantJSON {
				t.Errorf("HTTP: named %q, want %q (%s)", got.field, wantJSON, got.note)
			}
		})
	}
	if s := b.stats(t, "zero"); s.Scheduled+s.Ready+s.Active+s.Dead != 0 {
		t.Errorf("queue zero holds %+v; every enqueue was to be refused", s)
	}
}

// paritySpelling is the JSON member and the flag of a Go field; a
// header's entry (Headers["x"]) is headers["x"] in JSON and --header on
// the command line.
func paritySpelling(t *testing.T, field string) (jsonName, flag string) {
	t.Helper()
	name, index, _ := strings.Cut(field, "[")
	n, ok := parityNames[name]
	if !ok {
		t.Fatalf("the test has no names for field %q", field)
	}
	if index != "" {
		return n.json + "[" + index, n.flag
	}
	return n.json, n.flag
}

func parityGo(t *testing.T, c *worker.Client, spec worker.JobSpec) parityVerdict {
	t.Helper()
	_, err := c.EnqueueMany(t.Context(), []worker.JobSpec{spec})
	var ve *worker.ValidationError
	switch {
	case err == nil:
		return parityVerdict{}
	case errors.As(err, &ve):
		return parityVerdict{field: ve.Field, note: err.Error()}
	}
	return parityVerdict{field: "(not a validation error)", note: err.Error()}
}

// parityCLI reads the outcome of courier enqueue --json: exit 0 and an
// id, or exit 2 (a usage error: a bad flag) and the error's field.
func parityCLI(code int, stdout, stderr string) parityVerdict {
	note := fmt.Sprintf("exit %d: %s", code, strings.TrimSpace(stderr))
	if code == exitOK {
		return parityVerdict{note: note}
	}
	var reply wire.ErrorReply
	if err := json.Unmarshal([]byte(stdout), &reply); err != nil {
		return parityVerdict{field: "(no JSON error)", note: note}
	}
	if code != exitUsage {
		return parityVerdict{field: "(exit " + strconv.Itoa(code) + ") " + reply.Error.Field, note: note}
	}
	return parityVerdict{field: reply.Error.Field, note: note}
}

// parityHTTP posts body as a job to queue: 201 is accepted; a refusal
// must be a 400 of code invalid_field.
func parityHTTP(t *testing.T, base, queue, body string) parityVerdict {
	t.Helper()
	if body == "" {
		body = "{}"
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/v1/queues/"+url.PathEscape(queue)+"/jobs", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	note := fmt.Sprintf("HTTP %d: %s", resp.StatusCode, data)
	if resp.StatusCode == http.StatusCreated {
		return parityVerdict{note: note}
	}
	var reply wire.ErrorReply
	if err := json.Unmarshal(data, &reply); err != nil {
		return parityVerdict{field: "(no JSON error)", note: note}
	}
	if resp.StatusCode != http.StatusBadRequest || reply.Error.Code != wire.CodeInvalidField {
		return parityVerdict{field: fmt.Sprintf("(%d %s) %s", resp.StatusCode, reply.Error.Code, reply.Error.Field), note: note}
	}
	return parityVerdict{field: reply.Error.Field, note: note}
}

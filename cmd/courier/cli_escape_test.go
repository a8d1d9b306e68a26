package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// The tests in this file check that the client commands print text from
// jobs, Redis and the API escaped (see term.go), end to end. Failures
// quote the output (%q), so that a failing test does not drive the
// terminal it reports to either.

// hostileError is what a probe got into a job's last error through a TLS
// certificate's names: it retitles the window, clears the screen, and
// draws a line of its own, then adds a C1 CSI, a bidi override and DEL.
const hostileError = "\x1b]0;pwned\x07\x1b[2J\r\nstate:\tdone\u009b2J\u202eevil\x7f"

// TestCLIEscapesJobText: a dead job's hostile last error and payload reach
// the terminal escaped, from inspect and dead list, directly on Redis and
// through the API; --json gives the error back exact.
func TestCLIEscapesJobText(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	payload := func(id string) []byte { return []byte("\x1b]0;payload\x07\u202e " + id) }
	b.killWithErrors(t, "q",
		doomedJob{id: "hostile", payload: payload("hostile"), err: hostileError},
		doomedJob{id: "latin1", payload: payload("latin1"), err: "tls: caf\xe9 \xff"})
	url := b.apiServer(t)
	// The worker stores "permanent: " and the error; --json must give
	// back what it stored, byte for byte.
	stored := b.get(t, "q", "hostile").LastError
	if !strings.HasSuffix(stored, hostileError) {
		t.Fatalf("the job's last error is %q, want it to end in %q", stored, hostileError)
	}
	modes := map[string]func(t *testing.T, cmd string, flags ...string) (int, string, string){
		"redis": func(t *testing.T, cmd string, flags ...string) (int, string, string) {
			return b.run(t, "", cmd, flags...)
		},
		"api": func(t *testing.T, cmd string, flags ...string) (int, string, string) {
			args := append(strings.Fields(cmd), "--api", url, "--token", testAdminToken)
			return runCLIStdin(t, t.Context(), "", append(args, flags...)...)
		},
	}
	const escaped = `\x1b]0;pwned\x07\x1b[2J`
	for mode, run := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := run(t, "inspect", "--queue", "q", "--job", "hostile")
			assertTerminalSafe(t, out+errOut)
			if code != 0 || !strings.Contains(out, escaped+`\r\nstate:\tdone\u009b2J\u202eevil\x7f`+"\n") {
				t.Errorf("inspect: exit %d, want the last error escaped: %q %q", code, out, errOut)
			}
			if n := strings.Count("\n"+out, "\nstate:"); n != 1 {
				t.Errorf("inspect: %d lines begin with state:, want inspect's own only: %q", n, out)
			}

			code, out, errOut = run(t, "dead list", "--queue", "q")
			assertTerminalSafe(t, out+errOut)
			rows, _ := deadTable(t, out)
			if code != 0 || len(rows) != 2 || !strings.Contains(out, escaped+` state: done\u009b2J\u202eevil\x7f`+"\n") {
				t.Errorf("dead list: exit %d, want both jobs, the last error escaped on one line: %q %q", code, out, errOut)
			}
			// Bytes that are not UTF-8 show as such from Redis; the API's
			// JSON has made them U+FFFD.
			if latin1 := map[string]string{"redis": `tls: caf\xe9 \xff`, "api": "tls: caf\ufffd \ufffd"}[mode]; !strings.Contains(out, latin1+"\n") {
				t.Errorf("dead list: want %q in %q", latin1, out)
			}

			// --json is exact, but for bytes that are not UTF-8, which
			// encoding/json (the API's included) writes as U+FFFD.
			code, out, errOut = run(t, "inspect", "--queue", "q", "--job", "hostile", "--json")
			assertTerminalSafe(t, out+errOut)
			if j := decodeJSON[wire.Job](t, out); code != 0 || j.LastError != stored {
				t.Errorf("inspect --json: exit %d, last_error %q, want %q", code, j.LastError, stored)
			}
			code, out, errOut = run(t, "dead list", "--queue", "q", "--json")
			assertTerminalSafe(t, out+errOut)
			want := map[string]string{"hostile": stored, "latin1": "permanent: tls: caf\ufffd \ufffd"}
			page := decodeJSON[wire.Page](t, out)
			for _, j := range page.Jobs {
				if j.LastError != want[j.ID] {
					t.Errorf("dead list --json: job %q has last_error %q, want %q", j.ID, j.LastError, want[j.ID])
				}
			}
			if code != 0 || len(page.Jobs) != 2 {
				t.Errorf("dead list --json: exit %d, %d jobs, want 2: %q", code, len(page.Jobs), out)
			}
		})
	}
}

// TestCLIEscapesAPIText: a hostile API server cannot drive the terminal
// through what the commands print of its replies: ids, queue names,
// states, cursors and error messages.
func TestCLIEscapesAPIText(t *testing.T) {
	t.Parallel()
	job := map[string]any{
		"id": "j\x1b[31m", "queue": "q\u202e", "state": "\x1b[2Jdone", "attempts": 1,
		"enqueued_at": "2026-01-01T00:00:00Z", "died_at": "2026-01-01T00:00:01Z", "last_error": hostileError,
	}
	replies := map[string]struct {
		status int
		body   any
	}{
		"POST /v1/queues/q/jobs":       {http.StatusCreated, map[string]any{"id": "\x1b]0;id\x07", "run_at": "2026-01-01T00:00:00Z"}},
		"GET /v1/queues/q/jobs/j":      {http.StatusOK, job},
		"GET /v1/queues/q/jobs":        {http.StatusOK, map[string]any{"jobs": []any{job}, "next_cursor": "c\x1b]0;cursor\x07"}},
		"GET /v1/queues":               {http.StatusOK, map[string]any{"queues": []any{map[string]any{"name": "q\x1b[2J"}}}},
		"GET /v1/queues/q/jobs/gone":   {http.StatusNotFound, map[string]any{"error": map[string]any{"code": "not_found", "field": "id", "message": "gone\x1b]0;pwned\x07\r\nstate: done"}}},
		"GET /v1/queues/q/jobs/broken": {http.StatusBadGateway, "\x1b[2Jbad gateway\u009b"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply, ok := replies[r.Method+" "+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(reply.status)
		if s, ok := reply.body.(string); ok {
			_, _ = w.Write([]byte(s)) // not JSON, as a proxy in the way might answer
			return
		}
		_ = json.NewEncoder(w).Encode(reply.body)
	}))
	t.Cleanup(srv.Close)

	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string // in stdout and stderr
	}{
		{"enqueue prints the id", []string{"enqueue", "--queue", "q", "--payload", "x"}, 0, `\x1b]0;id\x07` + "\n"},
		{"inspect a job", []string{"inspect", "--queue", "q", "--job", "j"}, 0, `j\x1b[31m` + "\n"},
		{"inspect a job's queue", []string{"inspect", "--queue", "q", "--job", "j"}, 0, `q\u202e` + "\n"},
		{"inspect a job's state", []string{"inspect", "--queue", "q", "--job", "j"}, 0, `\x1b[2Jdone` + "\n"},
		{"inspect a job's last error", []string{"inspect", "--queue", "q", "--job", "j"}, 0, `\x1b]0;pwned\x07\x1b[2J\r\nstate:\tdone`},
		{"dead list", []string{"dead", "list", "--queue", "q"}, 0, `j\x1b[31m`},
		{"dead list's cursor", []string{"dead", "list", "--queue", "q"}, 0, `more: --cursor c\x1b]0;cursor\x07` + "\n"},
		{"a queue name", []string{"inspect"}, 1, `q\x1b[2J`},
		{"an error message", []string{"inspect", "--queue", "q", "--job", "gone"}, exitNotFound, `gone\x1b]0;pwned\x07\r` + "\nstate: done"},
		{"an error that is not JSON", []string{"inspect", "--queue", "q", "--job", "broken"}, 1, `\x1b[2Jbad gateway\u009b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := slices.Concat(tt.args, []string{"--api", srv.URL, "--token", testAdminToken})
			code, out, errOut := runCLIStdin(t, t.Context(), "", args...)
			assertTerminalSafe(t, out+errOut)
			if code != tt.wantCode || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, want %d and %q in %q %q", code, tt.wantCode, tt.want, out, errOut)
			}
		})
	}
}

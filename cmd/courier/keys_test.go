package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestEnqueueKey: courier enqueue --key stores the job's key, directly on
// Redis and through the API; inspect shows it, and jobs list has a KEY
// column once a job of the page has one.
func TestEnqueueKey(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	code, out, errOut := b.run(t, "", "enqueue", "--queue", "kq", "--id", "k1", "--key", "acme", "--delay", "1h", "--payload", "x")
	if code != 0 || strings.TrimSpace(out) != "k1" {
		t.Fatalf("enqueue --key: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = runCLIStdin(t, t.Context(), "", "enqueue", "--api", url, "--token", testAdminToken,
		"--queue", "kq", "--id", "k2", "--key", "tenant/42", "--delay", "2h", "--payload", "x")
	if code != 0 || strings.TrimSpace(out) != "k2" {
		t.Fatalf("enqueue --key --api: exit %d, %q %q", code, out, errOut)
	}
	b.enqueue(t, worker.JobSpec{Queue: "kq", ID: "k3", Delay: 3 * time.Hour})
	for id, key := range map[string]string{"k1": "acme", "k2": "tenant/42", "k3": ""} {
		if j := b.get(t, "kq", id); j.Key != key {
			t.Errorf("%s: key %q, want %q", id, j.Key, key)
		}
	}

	code, out, _ = b.run(t, "", "inspect", "--queue", "kq", "--job", "k1")
	if code != 0 || !strings.Contains(out, "key:          acme\n") {
		t.Errorf("inspect: exit %d\n%s", code, out)
	}
	code, out, _ = b.run(t, "", "inspect", "--queue", "kq", "--job", "k3")
	if code != 0 || strings.Contains(out, "key:") {
		t.Errorf("inspect of a job without a key: exit %d\n%s", code, out)
	}
	code, out, _ = b.run(t, "", "inspect", "--queue", "kq", "--job", "k2", "--json")
	if j := decodeJSON[wire.Job](t, out); code != 0 || j.Key != "tenant/42" {
		t.Errorf("inspect --json: exit %d, %s", code, out)
	}
	code, out, _ = b.run(t, "", "jobs list", "--queue", "kq", "--state", "scheduled")
	rows := tableRows(out)
	if code != 0 || len(rows) != 4 || !slices.Equal(rows[0][:3], []string{"ID", "KEY", "PRIORITY"}) ||
		rows[1][1] != "acme" || rows[2][1] != "tenant/42" || rows[3][1] != "-" {
		t.Errorf("jobs list: exit %d, rows %q", code, rows)
	}
}

// TestKeysCommand: keys list, show, set and reset, directly on Redis and
// through the API, each on a queue of its own; what set and reset change
// is what the library reads.
func TestKeysCommand(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	url := b.apiServer(t)
	modes := map[string]func(t *testing.T, cmd string, flags ...string) (int, string, string){
		"redis": func(t *testing.T, cmd string, flags ...string) (int, string, string) {
			t.Helper()
			return b.run(t, "", cmd, flags...)
		},
		"api": func(t *testing.T, cmd string, flags ...string) (int, string, string) {
			t.Helper()
			args := append(strings.Fields(cmd), "--api", url, "--token", testAdminToken)
			return runCLIStdin(t, t.Context(), "", append(args, flags...)...)
		},
	}
	for mode, run := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			q := "k-" + mode
			var specs []worker.JobSpec
			for key, n := range map[string]int{"acme": 3, "globex": 2, "initech": 1} {
				for range n {
					specs = append(specs, worker.JobSpec{Queue: q, Key: key, Delay: time.Hour})
				}
			}
			b.enqueue(t, specs...)
			limits := func(key string) admin.KeyLimits {
				t.Helper()
				s, err := b.client.Key(t.Context(), q, key)
				if err != nil {
					t.Fatal(err)
				}
				return s.Limits
			}

			header := []string{"KEY", "WAITING", "READY", "RUNNING", "CAP", "WEIGHT", "RATE", "LIMIT", "AT", "CAP"}
			code, out, errOut := run(t, "keys list", "--queue", q)
			want := [][]string{header, {"acme", "3", "0", "0", "queue's", "1", "queue's", "no"}, {"globex", "2", "0", "0", "queue's", "1", "queue's", "no"},
				{"initech", "1", "0", "0", "queue's", "1", "queue's", "no"}}
			if got := tableRows(out); code != 0 || errOut != "" || !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("list: exit %d, %q, stderr %q; want %q", code, got, errOut, want)
			}
			code, out, _ = run(t, "keys list", "--queue", q, "--top", "2")
			if code != 0 || len(tableRows(out)) != 4 || !strings.HasSuffix(out, "2 of 3 keys with waiting jobs shown; --top N shows more\n") {
				t.Errorf("list --top 2: exit %d\n%s", code, out)
			}
			code, out, _ = run(t, "keys list", "--queue", q, "--top", "1", "--json")
			if l := decodeJSON[wire.KeyList](t, out); code != 0 || l.Total != 3 || len(l.Keys) != 1 || l.Keys[0].Key != "acme" || l.Keys[0].Waiting != 3 {
				t.Errorf("list --json: exit %d, %s", code, out)
			}

			code, out, errOut = run(t, "keys set", "--queue", q, "--key", "acme", "--concurrency", "2", "--weight", "5")
			if code != 0 || out != "set key acme of queue "+q+": cap 2, weight 5, the queue's rate limit\n" || errOut != "" {
				t.Errorf("set: exit %d, %q, %q", code, out, errOut)
			}
			if l := limits("acme"); !reflect.DeepEqual(l, admin.KeyLimits{Concurrency: 2, Weight: 5}) {
				t.Errorf("after set: %+v", l)
			}
			// A flag left out is the default: set replaces both limits.
			code, out, _ = run(t, "keys set", "--queue", q, "--key", "acme", "--concurrency", "0", "--rate-limit", "")
			if code != 0 || out != "set key acme of queue "+q+": no cap, weight 1, no rate limit\n" {
				t.Errorf("set --concurrency 0 --rate-limit '': exit %d, %q", code, out)
			}
			if l := limits("acme"); !reflect.DeepEqual(l, admin.KeyLimits{Concurrency: 0, RateLimit: &worker.RateLimit{}}) {
				t.Errorf("after set --concurrency 0: %+v", l)
			}
			code, out, _ = run(t, "keys set", "--queue", q, "--key", "initech", "--rate-limit", "10/1m")
			if code != 0 || out != "set key initech of queue "+q+": the queue's cap, weight 1, at most 10 per 1m0s\n" {
				t.Errorf("set --rate-limit: exit %d, %q", code, out)
			}
			if l := limits("initech"); !reflect.DeepEqual(l, admin.KeyLimits{Concurrency: -1, RateLimit: &worker.RateLimit{N: 10, Per: time.Minute}}) {
				t.Errorf("after set --rate-limit: %+v", l)
			}
			code, out, _ = run(t, "keys set", "--queue", q, "--key", "globex", "--weight", "3", "--json")
			k := decodeJSON[wire.Key](t, out)
			if code != 0 || k.Key != "globex" || k.Weight != 3 || k.Concurrency != nil || k.RateLimit != nil || k.Waiting != 2 {
				t.Errorf("set --json: exit %d, %s", code, out)
			}
			code, out, _ = run(t, "keys show", "--queue", q, "--key", "acme")
			if code != 0 || out != "key:         acme\nwaiting:     3 (0 ready)\nrunning:     0\ncap:         none\nweight:      1\nrate limit:  none\nat cap:      no\n" {
				t.Errorf("show: exit %d\n%s", code, out)
			}
			code, out, _ = run(t, "keys show", "--queue", q, "--key", "nobody", "--json")
			if k := decodeJSON[wire.Key](t, out); code != 0 || !reflect.DeepEqual(k, wire.Key{Key: "nobody", Weight: 1}) {
				t.Errorf("show of a key without jobs: exit %d, %s", code, out)
			}
			code, out, _ = run(t, "keys list", "--queue", q)
			if rows := tableRows(out); code != 0 || len(rows) != 4 || !slices.Equal(rows[1], []string{"acme", "3", "0", "0", "none", "1", "none", "no"}) ||
				!slices.Equal(rows[2], []string{"globex", "2", "0", "0", "queue's", "3", "queue's", "no"}) {
				t.Errorf("list after set: exit %d, %q", code, rows)
			}

			// Reset, twice alike.
			for range 2 {
				code, out, _ = run(t, "keys reset", "--queue", q, "--key", "acme")
				if code != 0 || out != "reset key acme of queue "+q+": the queue's cap, weight 1, the queue's rate limit\n" {
					t.Errorf("reset: exit %d, %q", code, out)
				}
				if l := limits("acme"); !reflect.DeepEqual(l, admin.DefaultKeyLimits) {
					t.Errorf("after reset: %+v", l)
				}
			}

			// Refused: nothing changes.
			for _, flags := range [][]string{
				{"--key", "globex", "--concurrency", "-2"},
				{"--key", "globex", "--concurrency", "1000001"},
				{"--key", "globex", "--weight", "1001"},
				{"--key", "globex", "--weight", "-1"},
				{"--key", "globex", "--rate-limit", "0 per 1s"},
				{"--key", "globex", "--rate-limit", "lots"},
			} {
				code, out, errOut = run(t, "keys set", append([]string{"--queue", q}, flags...)...)
				if flag := flags[2]; code != exitUsage || out != "" || !strings.Contains(errOut, "invalid "+flag+": ") {
					t.Errorf("set %v: exit %d, %q, %q; want a usage error naming %s", flags, code, out, errOut, flag)
				}
			}
			if l := limits("globex"); !reflect.DeepEqual(l, admin.KeyLimits{Concurrency: -1, Weight: 3}) {
				t.Errorf("after refused sets: %+v", l)
			}
		})
	}
}

func TestKeysUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cmd      string
		flags    []string
		code     int
		inStderr string
	}{
		{"no action", "keys", []string{"--queue", "q"}, 2, "name an action: list, show, set or reset"},
		{"unknown action", "keys drop", []string{"--queue", "q"}, 2, `unknown action "drop"`},
		{"action help", "keys set", []string{"-h"}, 0, "--concurrency"},
		{"list without queue", "keys list", nil, 2, "--queue is required"},
		{"show without key", "keys show", []string{"--queue", "q"}, 2, "--key is required"},
		{"set without key", "keys set", []string{"--queue", "q", "--weight", "2"}, 2, "--key is required"},
		{"set without limits", "keys set", []string{"--queue", "q", "--key", "acme"}, 2, "give --concurrency, --weight or --rate-limit"},
		{"rate limit in words", "keys set", []string{"--queue", "q", "--key", "acme", "--rate-limit", "fast"}, 2, `invalid --rate-limit: expected "N per DURATION"`},
		{"reset without key", "keys reset", []string{"--queue", "q"}, 2, "--key is required"},
		{"bad queue", "keys list", []string{"--queue", "a{b}"}, 2, `invalid --queue: name "a{b}" has '{'`},
		{"bad key", "keys show", []string{"--queue", "q", "--key", "a b"}, 2, `invalid --key: "a b" has ' '`},
		{"bad key through the API", "keys reset", []string{"--queue", "q", "--key", "a b", "--api", "http://127.0.0.1:1"}, 2, "invalid --key"},
		{"top zero", "keys list", []string{"--queue", "q", "--top", "0"}, 2, "invalid --top: must be 1 to 1000 (got 0)"},
		{"top over the max", "keys list", []string{"--queue", "q", "--top", "1001"}, 2, "invalid --top"},
		{"weight out of range", "keys set", []string{"--queue", "q", "--key", "acme", "--weight", "2000"}, 2, "invalid --weight"},
		{"key on list", "keys list", []string{"--queue", "q", "--key", "acme"}, 2, "flag provided but not defined: --key"},
		{"concurrency on show", "keys show", []string{"--queue", "q", "--key", "acme", "--concurrency", "1"}, 2, "flag provided but not defined: --concurrency"},
		{"stray argument", "keys list", []string{"--queue", "q", "acme"}, 2, `unexpected argument "acme"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupCLI(t)
			code, stdout, stderr := b.run(t, "", tt.cmd, tt.flags...)
			checkOutput(t, code, stdout, stderr, tt.code, tt.inStderr)
		})
	}
}

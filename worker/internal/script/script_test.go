package script

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/lua"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// backends are the Redis deployments every script test runs on.
var backends = map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster}

// TestCatalogMatchesFiles keeps the catalog in step with the files: every
// script file is declared once, under its file name.
func TestCatalogMatchesFiles(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(lua.Files, "*.lua")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if !isHelperFile(f) {
			want = append(want, strings.TrimSuffix(f, ".lua"))
		}
	}
	got := slices.Sorted(slices.Values(Names()))
	if !slices.Equal(got, want) {
		t.Errorf("declared scripts %v, files %v", got, want)
	}
	for _, s := range All() {
		body, _ := fs.ReadFile(lua.Files, s.Name()+".lua")
		if !strings.Contains(s.plain.src, string(body[:min(len(body), 200)])) {
			t.Errorf("%s: the plain source does not hold its file", s.Name())
		}
		if n, m := strings.Count(s.Source(), "\n"), strings.Count(s.plain.src, "\n"); n != m {
			t.Errorf("%s: %d lines with flags, %d without: line numbers differ", s.Name(), n, m)
		}
		switch s.OOM() {
		case AllowOOM:
			_, rest, _ := strings.Cut(string(body), "\n")
			if !strings.HasPrefix(s.Source(), allowOOMLine+"\n") || !strings.Contains(s.Source(), rest[:min(len(rest), 100)]) {
				t.Errorf("%s: declared AllowOOM, but the source is not its file behind %q", s.Name(), allowOOMLine)
			}
		default:
			if s.Source() != s.plain.src {
				t.Errorf("%s: declared DenyOOM, but sent with flags", s.Name())
			}
		}
	}
}

// TestSourcesShipWhatTheyUse checks the assembly: a script gets the helpers
// it names and the helpers those name, and nothing else.
func TestSourcesShipWhatTheyUse(t *testing.T) {
	t.Parallel()
	for _, s := range []*Script{LockAcquire, LockRelease, LockRenew} {
		body, _ := fs.ReadFile(lua.Files, s.Name()+".lua")
		_, rest, _ := strings.Cut(string(body), "\n")
		if s.plain.src != string(body) || s.Source() != allowOOMLine+"\n"+rest {
			t.Errorf("%s uses no helper but is not sent as its file reads (behind its flags line)", s.Name())
		}
	}
	// stats names now_ms only.
	if src := Stats.Source(); !strings.Contains(src, "function now_ms(") ||
		strings.Contains(src, "function rec_decode(") || strings.Contains(src, "function pairs_from(") {
		t.Errorf("stats ships the wrong helpers:\n%s", src)
	}
	// claim names pin, which names PIN.
	if src := Claim.Source(); !strings.Contains(src, "\nPIN = ") {
		t.Errorf("claim ships pin without PIN")
	}
	for _, s := range All() {
		lines := strings.Count(s.Source(), "\n")
		t.Logf("%-12s %4d lines sent", s.Name(), lines)
	}
}

// TestLineNumbersStayTrue runs scripts that fail on a known line of their
// own and checks that Redis names that line, with helpers and with a
// shebang line.
func TestLineNumbersStayTrue(t *testing.T) {
	t.Parallel()
	helpers, err := loadHelpers()
	if err != nil {
		t.Fatal(err)
	}
	for name, connect := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := NewConn(connect(t), nil)
			prefix := testkit.Prefix(t)
			for _, tc := range []struct {
				name, body, line string
			}{
				{"helpers", "-- " + prefix + "\nlocal now = now_ms()\nlocal x = nil\nreturn x.y + now\n", "user_script:4:"},
				{"shebang", "#!lua flags=no-writes\n-- " + prefix + "\nlocal h = head_ms(KEYS[1])\nreturn nil + 1\n", "user_script:4:"},
				{"plain", "-- " + prefix + "\n\nreturn nil + 1\n", "user_script:3:"},
				{"flags", "-- header\n-- " + prefix + "\nlocal now = now_ms()\nlocal x = nil\nreturn x.y + now\n", "user_script:5:"},
			} {
				body := tc.body
				if tc.name == "flags" {
					if body, err = withFlags(body, allowOOMLine); err != nil {
						t.Fatal(err)
					}
				}
				s := newScript(tc.name, assemble(body, helpers), Once)
				err := s.Exec(t.Context(), c, []string{prefix + ":{k}"}, nil).Error()
				if err == nil || !strings.Contains(err.Error(), tc.line) {
					t.Errorf("%s: error %v, want it to name %s\nsent:\n%s", tc.name, err, tc.line, s.Source())
				}
			}
		})
	}
}

// TestExecMulti runs calls on keys of many hash slots, first with a script
// no server has cached (every EVALSHA answers NOSCRIPT and falls back to
// EVAL), then again from the cache; each ExecMulti is timed once.
func TestExecMulti(t *testing.T) {
	t.Parallel()
	for name, connect := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, reg := meteredConn(t, connect(t))
			prefix := testkit.Prefix(t)
			// The prefix in a comment makes the script new to the server.
			s := newScript("incr", "-- "+prefix+"\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])", Once)
			var calls []Call
			for _, tag := range []string{"a", "b", "c", "d", "e", "f"} {
				calls = append(calls, Call{Keys: []string{prefix + ":{" + tag + "}"}, Args: []string{"2"}})
			}
			for round := int64(1); round <= 2; round++ {
				for i, res := range s.ExecMulti(t.Context(), c, calls...) {
					if n, err := res.AsInt64(); err != nil || n != 2*round {
						t.Errorf("round %d call %d = %d, %v; want %d", round, i, n, err, 2*round)
					}
				}
			}
			if n := testkit.Metric(t, reg, "courier_redis_script_seconds", "script", "incr"); n != 2 {
				t.Errorf("courier_redis_script_seconds_count{script=incr} = %v, want 2", n)
			}
		})
	}
}

// TestMetricsByName sends a known sequence through a Conn and checks what
// was timed and counted, by script name and command name.
func TestMetricsByName(t *testing.T) {
	t.Parallel()
	c, reg := meteredConn(t, testkit.Single(t))
	ctx := t.Context()
	p := testkit.Prefix(t)

	// Plain commands: a nil reply is an answer, a wrong-type error counts.
	if err := c.Do(ctx, c.B().Set().Key(p+":s").Value("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, c.B().Get().Key(p+":missing").Build()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("GET missing: %v", err)
	}
	for _, res := range c.DoMulti(ctx, c.B().Incr().Key(p+":s").Build(), c.B().Ping().Build()) {
		_ = res.Error()
	}
	// Scripts: lock_acquire takes a free lock (a nil reply) twice; a script
	// whose call fails counts under its name.
	args := []string{"60000", "owner"}
	for i := range 2 {
		if err := LockAcquire.Exec(ctx, c, []string{p + ":lock"}, args).Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("lock_acquire %d: %v", i, err)
		}
	}
	failing := newScript("failing", "return redis.call('INCR', KEYS[1])", Once)
	if err := failing.Exec(ctx, c, []string{p + ":s"}, nil).Error(); err == nil {
		t.Fatal("INCR of a string succeeded")
	}

	for op, want := range map[string]float64{"incr": 1, "get": 0, "set": 0, "ping": 0, "failing": 1, "lock_acquire": 0} {
		if got := testkit.Metric(t, reg, "courier_redis_errors_total", "op", op); got != want {
			t.Errorf(`courier_redis_errors_total{op=%q} = %v, want %v`, op, got, want)
		}
	}
	for script, want := range map[string]float64{"lock_acquire": 2, "failing": 1} {
		if got := testkit.Metric(t, reg, "courier_redis_script_seconds", "script", script); got != want {
			t.Errorf(`courier_redis_script_seconds_count{script=%q} = %v, want %v`, script, got, want)
		}
	}
}

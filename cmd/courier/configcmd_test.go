package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// Tokens of the configuration tests, marked so a leak is seen.
const (
	configTokenA = "9f3b1c2d7e8a4f6051b2c3d4e5f60718-config-secret-a"
	configTokenB = "0a1b2c3d4e5f60718293a4b5c6d7e8f9-config-secret-b"
)

// configCLI runs courier config args through the command table, as run
// does, with environ as the whole environment.
func configCLI(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := configCommand()
	cmd.define = func(fs *flag.FlagSet, act string) runFunc {
		return defineConfigIn(fs, act, func() []string { return environ })
	}
	var out, errOut testkit.Buffer
	std := streams{in: strings.NewReader(""), out: &out, err: &errOut}
	c, err := execute(t.Context(), "config", cmd, args, std)
	return c.report(err, std), out.String(), errOut.String()
}

// configWithToken is a configuration courier run starts with, API on.
const configWithToken = `
queues:
  emails:
    handler: log
admin:
  tokens:
    - {name: ops, token: ` + configTokenA + `, role: admin}
`

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	good := writeFile(t, "good.yaml", []byte(configWithToken))
	tokenFile := writeFile(t, "token", []byte(configTokenB+"\n"))
	tests := []struct {
		name    string
		environ []string
		args    []string
		code    int
		stdout  string   // exactly
		stderr  []string // each somewhere in stderr; nil: stderr empty
	}{
		{"valid", nil, []string{"check", "--config", good}, 0, "config OK: " + good + "\n", nil},
		{"valid, warnings", []string{"COURIER_REDIS_ADDR=x:1", "COURIER_TEST_REDIS_IMAGE=redis:7", "COURIER_TOKEN=t"},
			[]string{"check", "--config", good}, 0, "config OK: " + good + "\n",
			[]string{"warning: COURIER_REDIS_ADDR sets nothing: did you mean COURIER_REDIS__ADDR? (a double underscore separates the levels of a key)\n"}},
		{"no file", []string{"COURIER_QUEUES__DEMO__HANDLER=log"}, []string{"check"}, 0,
			"config OK: (no file: the defaults and the environment)\n",
			[]string{"warning: admin.tokens: no API token is configured, so courier run serves no HTTP API: requests under /v1/ get 404"}},
		{"token_file and token_env", []string{"OPS_TOKEN=" + configTokenA},
			[]string{"check", "--config", writeFile(t, "tokens.yaml", []byte("queues: {q: {handler: log}}\nadmin:\n  tokens:\n"+
				"    - {name: a, token_env: OPS_TOKEN, role: admin}\n    - {name: b, token_file: "+tokenFile+", role: producer}\n"))},
			0, "config OK: ", nil},
		{"every problem", []string{"COURIER_REDIS_ADDR=x:1", "COURIER_LOG__LEVEL=loud"},
			[]string{"check", "--config", writeFile(t, "bad.yaml", []byte("queues:\n  emails:\n    handler: log\n    concurency: 3\n"))},
			1, "", []string{
				": 2 problems:\n",
				"  log.level: must be debug, info, warn or error (got \"loud\") (set by COURIER_LOG__LEVEL)\n",
				"  queues.emails.concurency: unknown key (did you mean \"concurrency\"?)\n",
				"warning: COURIER_REDIS_ADDR sets nothing: did you mean COURIER_REDIS__ADDR?",
			}},
		{"what courier run refuses", nil,
			[]string{"check", "--config", writeFile(t, "run.yaml", []byte("admin: {addr: 127.0.0.1:0}\n"))},
			1, "", []string{
				"  admin.tokens: no API token is configured",
				"(courier run refuses to start: admin.addr is set)\n",
				"  queues: no queue is configured",
			}},
		{"a handler's settings", nil,
			[]string{"check", "--config", writeFile(t, "hook.yaml", []byte("queues:\n  h:\n    handler: webhook\n    webhook:\n      url: ftp://x/\n"))},
			1, "", []string{"  queues.h.webhook.url: "}},
		{"missing file", nil, []string{"check", "--config", "/nonexistent/courier.yaml"}, 1, "",
			[]string{"/nonexistent/courier.yaml: 1 problem:\n  config file: open /nonexistent/courier.yaml: no such file or directory\n"}},
		{"YAML syntax", nil,
			[]string{"check", "--config", writeFile(t, "syntax.yaml", []byte("redis:\n  addr: [x:1]\n db: 2\n"))},
			1, "", []string{"syntax.yaml: line 3: did not find expected key\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := configCLI(t, tt.environ, tt.args...)
			if code != tt.code || !strings.HasPrefix(stdout, tt.stdout) || (tt.stdout == "") != (stdout == "") {
				t.Errorf("exit %d, stdout %q; want %d, %q\nstderr:\n%s", code, stdout, tt.code, tt.stdout, stderr)
			}
			if tt.stderr == nil && stderr != "" {
				t.Errorf("stderr:\n%s\nwant none", stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stdout+stderr, "config-secret") {
				t.Errorf("a token leaked:\n%s%s", stdout, stderr)
			}
		})
	}
}

// TestConfigCheckJSON: --json prints one document, problems and warnings
// included, and exits as the text form does.
func TestConfigCheckJSON(t *testing.T) {
	t.Parallel()
	type reply struct {
		OK       bool `json:"ok"`
		Problems []struct {
			Key     string `json:"key"`
			Message string `json:"message"`
		} `json:"problems"`
		Warnings []string `json:"warnings"`
	}
	decode := func(t *testing.T, stdout string) reply {
		t.Helper()
		var r reply
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || dec.More() {
			t.Fatalf("stdout is not one JSON document (%v):\n%s", err, stdout)
		}
		return r
	}

	code, stdout, stderr := configCLI(t, nil, "check", "--json", "--config", writeFile(t, "good.yaml", []byte(configWithToken)))
	if r := decode(t, stdout); code != 0 || stderr != "" || !r.OK || r.Problems == nil || len(r.Problems) != 0 || r.Warnings == nil {
		t.Errorf("valid: exit %d, %+v, stderr %q; want 0, ok, [] and []", code, r, stderr)
	}
	if !strings.Contains(stdout, `"problems": []`) || !strings.Contains(stdout, `"warnings": []`) {
		t.Errorf("empty lists are not []:\n%s", stdout)
	}

	code, stdout, stderr = configCLI(t, []string{"COURIER_REDIS_ADDR=x:1"}, "check", "--json", "--config",
		writeFile(t, "bad.yaml", []byte("queues:\n  emails:\n    handler: log\n    concurency: 3\n")))
	r := decode(t, stdout)
	if code != 1 || stderr != "" || r.OK || len(r.Problems) != 1 || len(r.Warnings) != 1 {
		t.Fatalf("invalid: exit %d, %+v, stderr %q; want 1, one problem, one warning, stderr empty", code, r, stderr)
	}
	if p := r.Problems[0]; p.Key != "queues.emails.concurency" || p.Message != `unknown key (did you mean "concurrency"?)` {
		t.Errorf("problem %+v", p)
	}
	if !strings.HasPrefix(r.Warnings[0], "COURIER_REDIS_ADDR sets nothing") {
		t.Errorf("warnings %q", r.Warnings)
	}

	code, stdout, _ = configCLI(t, nil, "check", "--json", "--config", "/nonexistent/x.yaml")
	if r := decode(t, stdout); code != 1 || len(r.Problems) != 1 || r.Problems[0].Key != "" || !strings.Contains(r.Problems[0].Message, "no such file") {
		t.Errorf("missing file: exit %d, %+v", code, r)
	}
}

// TestConfigCheckComposeFile: the compose demo's configuration passes
// courier config check as the compose stack runs it, its token drawn by
// the api-token service into the file token_file names.
func TestConfigCheckComposeFile(t *testing.T) {
	t.Parallel()
	const tokenPath = "/run/courier/api-token" // see configs/docker-compose.yml
	text, err := os.ReadFile("../../configs/compose/courier.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), tokenPath) {
		t.Fatalf("configs/compose/courier.yaml does not read %s", tokenPath)
	}
	// As the service draws it: 64 random hex digits and a line break.
	token := writeFile(t, "api-token", []byte(hex.EncodeToString(configRandom(t, 32))+"\n"))
	file := writeFile(t, "courier.yaml", []byte(strings.ReplaceAll(string(text), tokenPath, token)))
	code, stdout, stderr := configCLI(t, nil, "check", "--config", file)
	if code != 0 || stdout != "config OK: "+file+"\n" || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

func TestConfigPrint(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "courier.yaml", []byte(configWithToken+"redis:\n  db: 2\n"))
	environ := []string{"COURIER_REDIS__PASSWORD=hunter2-config-secret", "COURIER_LOG__LEVEL=debug", "COURIER_REDIS_PREFIX=x"}

	code, stdout, stderr := configCLI(t, environ, "print", "--config", file, "--redis", "flag:6379")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"# courier config print: " + file + "\n",
		"  addr: ['flag:6379'] # flag --redis\n",
		"  password: '[redacted]' # env COURIER_REDIS__PASSWORD\n",
		"  db: 2 # file\n",
		"  prefix: courier # default\n",
		"  level: debug # env COURIER_LOG__LEVEL\n",
		"      token: '[redacted]' # file\n",
		"    handler: log # file\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if want := "warning: COURIER_REDIS_PREFIX sets nothing: did you mean COURIER_REDIS__PREFIX?"; !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr %q; want the warning %q", stderr, want)
	}
	if strings.Contains(stdout+stderr, "config-secret") {
		t.Errorf("a secret leaked:\n%s", stdout)
	}

	code, stdout, _ = configCLI(t, environ, "print", "--json", "--config", file, "--redis", "flag:6379")
	var doc struct {
		Config  map[string]map[string]any `json:"config"`
		Sources map[string]string         `json:"sources"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	if doc.Sources["redis.addr"] != "flag --redis" || doc.Sources["redis.password"] != "env COURIER_REDIS__PASSWORD" ||
		doc.Sources["redis.db"] != "file" || doc.Sources["poll.interval"] != "default" {
		t.Errorf("sources: %v", doc.Sources)
	}
	if doc.Config["redis"]["password"] != "[redacted]" || doc.Config["poll"]["interval"] != "5s" {
		t.Errorf("config: %v", doc.Config)
	}
	if strings.Contains(stdout, "config-secret") {
		t.Errorf("a secret leaked:\n%s", stdout)
	}

	code, stdout, stderr = configCLI(t, nil, "print", "--config", writeFile(t, "bad.yaml", []byte("redis:\n  adr: x:1\n")))
	if code != 1 || stdout != "" || !strings.Contains(stderr, "  redis.adr: unknown key (did you mean \"addr\"?)\n") {
		t.Errorf("invalid: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// TestConfigUsage: the actions, their help and the usage errors, through
// the command table.
func TestConfigUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"config"}, exitUsage, "courier config: name an action: check or print"},
		{[]string{"config", "chek"}, exitUsage, `did you mean "check"?`},
		{[]string{"config", "check", "--nope"}, exitUsage, "flag provided but not defined: --nope"},
		{[]string{"config", "print", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"config", "-h"}, exitOK, "Usage: courier config check|print [flags]"},
		{[]string{"help", "config", "check"}, exitOK, "Usage: courier config check [--config FILE] [--redis ADDRS] [--prefix P] [--json]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLIStdin(t, t.Context(), "", tt.args...)
			checkOutput(t, code, stdout, stderr, tt.code, tt.want)
		})
	}
}

func configRandom(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestConfigRunConfig: runConfig runs the words after "config".
func TestConfigRunConfig(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "courier.yaml")
	if err := os.WriteFile(file, []byte(configWithToken), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut testkit.Buffer
	if err := runConfig(t.Context(), []string{"check", "--config", file}, streams{out: &out, err: &errOut}); err != nil ||
		out.String() != "config OK: "+file+"\n" {
		t.Errorf("runConfig: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
}

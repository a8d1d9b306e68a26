package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// completionScript returns what courier completion prints for shell.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, t.Context(), "completion", shell)
	if code != 0 || stderr != "" || stdout == "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, code, stderr)
	}
	return stdout
}

// TestCompletionScripts: each script parses in its shell (zsh and fish
// when installed) and names every command, every action and every flag of
// the command table.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	syntax := map[string][]string{"bash": {"bash", "-n"}, "zsh": {"zsh", "-n"}, "fish": {"fish", "--no-execute"}}
	tree := completionTree(t.Context(), commands())
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			script := completionScript(t, shell)
			for _, n := range tree {
				if !strings.Contains(script, n.name) {
					t.Errorf("the %s script does not name the command %s", shell, n.name)
				}
				for _, a := range n.actions {
					if !strings.Contains(script, a.name) {
						t.Errorf("the %s script does not name %s %s", shell, n.name, a.name)
					}
					for _, f := range a.flags {
						if !strings.Contains(script, f.name) {
							t.Errorf("the %s script does not name %s %s --%s", shell, n.name, a.name, f.name)
						}
					}
				}
				for _, f := range n.flags {
					if !strings.Contains(script, f.name) {
						t.Errorf("the %s script does not name %s --%s", shell, n.name, f.name)
					}
				}
			}
			cmd := syntax[shell]
			if _, err := exec.LookPath(cmd[0]); err != nil {
				t.Skipf("%s is not installed: its syntax is not checked", cmd[0])
			}
			path := filepath.Join(t.TempDir(), "courier."+shell)
			if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(t.Context(), cmd[0], append(cmd[1:], path)...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", strings.Join(cmd, " "), path, err, out)
			}
		})
	}
}

// TestBashCompletion runs the bash script's completion function as bash
// would on <TAB>.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	path := filepath.Join(t.TempDir(), "courier.bash")
	if err := os.WriteFile(path, []byte(completionScript(t, "bash")), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string // what was typed; the word being completed is the last (empty after a space)
		want string // COMPREPLY, space-separated
	}{
		{"courier de", "dead dev"},
		{"courier dead ", "list requeue purge"},
		{"courier dead list --l", "--limit"},
		{"courier dead requeue --a", "--all --api"},
		{"courier dead list --j", "--json"},
		{"courier queue st", "status"},
		{"courier enqueue --unique-", "--unique-after-finish --unique-for --unique-key"},
		{"courier completion ", "bash zsh fish"},
		{"courier help qu", "queue"},
		{"courier help dead ", "list requeue purge"},
		{"courier bench --mo", "--mode"},
		{"courier config ", "check print"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			t.Parallel()
			words := strings.Fields(tt.line)
			if strings.HasSuffix(tt.line, " ") {
				words = append(words, "")
			}
			quoted := make([]string, len(words))
			for i, w := range words {
				quoted[i] = "'" + w + "'"
			}
			script := "source " + path + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
				strconv.Itoa(len(words)-1) + "\n_courier\necho \"${COMPREPLY[*]}\"\n"
			out, err := exec.CommandContext(t.Context(), "bash", "--norc", "--noprofile", "-c", script).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tt.want {
				t.Errorf("%q<TAB>: %q (%v), want %q", tt.line, out, err, tt.want)
			}
		})
	}
}

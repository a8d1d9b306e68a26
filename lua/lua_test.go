package lua

import (
	"io/fs"
	"strings"
	"testing"
)

// TestScriptHeaders checks that every script opens with its contract: its
// name, then KEYS (when it has keys), ARGV, returns and bound lines, all
// in the comment block before its first line of code.
func TestScriptHeaders(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(Files, "*.lua")
	if err != nil || len(names) < 2 {
		t.Fatalf("embedded files %v, %v", names, err)
	}
	for _, file := range names {
		if file == "record.lua" || file == "options.lua" || file == "paging.lua" || file == "rate.lua" || file == "keys.lua" { // helpers, not scripts
			continue
		}
		src, err := fs.ReadFile(Files, file)
		if err != nil {
			t.Fatal(err)
		}
		var header []string
		for _, line := range strings.Split(string(src), "\n") {
			if !strings.HasPrefix(line, "--") && !strings.HasPrefix(line, "#!") {
				break
			}
			header = append(header, line)
		}
		head := strings.Join(header, "\n")
		if !strings.HasPrefix(head, "-- "+file+":") && !strings.Contains(head, "\n-- "+file+":") {
			t.Errorf("%s: the header does not open with %q", file, "-- "+file+":")
		}
		for _, want := range []string{"KEYS[1]", "ARGV", "returns:", "bound:"} {
			if !strings.Contains(head, want) {
				t.Errorf("%s: the header has no %q", file, want)
			}
		}
	}
}

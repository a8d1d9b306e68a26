package bench

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScriptInternalCommands keeps the bench's list of commands that scripts
// run inside Redis in step with the scripts, so redis_calls_per_job counts
// only what clients send. Every script counts: the leader's (trim, fire) and
// the lock's (written in lower case, as Redisson's) run during a bench too.
func TestScriptInternalCommands(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`redis\.call\('([A-Za-z]+)'`)
	// The files, read from disk: the bench runs them through the public
	// worker package, and only the script layer imports package lua.
	files, err := filepath.Glob("../../../lua/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("the scripts: %v %v", files, err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".lua")
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if cmd := strings.ToLower(m[1]); !scriptInternal[cmd] {
				t.Errorf("%s.lua calls %s, which scriptInternal does not list", name, cmd)
			}
		}
	}
}

package lua

import (
	"os"
	"strings"
	"testing"
)

// TestAllNamesEveryScript keeps All in step with the files: metrics label
// script calls by these names, so a script missing here would be "other".
func TestAllNamesEveryScript(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	all := All()
	files := 0
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".lua")
		if !ok || name == "record" {
			continue
		}
		files++
		src, ok := all[name]
		if !ok {
			t.Errorf("%s.lua is not in All", name)
			continue
		}
		body, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(src, string(body)) {
			t.Errorf("All()[%q] is not the script of %s.lua", name, name)
		}
	}
	if files != len(all) {
		t.Errorf("All has %d scripts, the folder %d", len(all), files)
	}
}

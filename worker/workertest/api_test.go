package workertest_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "TestPublicAPI: write the current public API to testdata/api.txt")

// TestPublicAPI diffs the documented public API of workertest (go doc
// -all) against testdata/api.txt, as package worker's test does for the
// library, so that every change to it is deliberate: after one, run
//
//	cd worker/workertest && go test -run TestPublicAPI -update
//
// and commit the new snapshot with the change.
func TestPublicAPI(t *testing.T) {
	t.Parallel()
	goCmd := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if p, err := exec.LookPath("go"); err == nil {
		goCmd = p
	}
	got, err := exec.CommandContext(t.Context(), goCmd, "doc", "-all", ".").Output()
	if err != nil {
		t.Fatalf("go doc -all: %v", err)
	}
	file := filepath.Join("testdata", "api.txt")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(wl), len(gl)) {
		w, g := "", ""
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Fatalf("the public API differs from %s from line %d:\n-%s\n+%s\nif the change is meant, run go test -run TestPublicAPI -update and commit the snapshot", file, i+1, w, g)
		}
	}
}

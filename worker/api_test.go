package worker_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "TestPublicAPI: write the current public API to testdata/api")

// TestPublicAPI diffs the documented public API of worker, worker/lock,
// worker/limiter, worker/admin and worker/rediskeys
// (go doc -all) against testdata/api, so that every change to it is
// deliberate: after one, run
//
//	go test ./worker -run TestPublicAPI -update
//
// and commit the new snapshot with the change.
func TestPublicAPI(t *testing.T) {
	t.Parallel()
	for _, pkg := range []struct{ path, file string }{
		{"github.com/seed-53d105c9/courier/worker", "worker.txt"},
		{"github.com/seed-53d105c9/courier/worker/lock", "lock.txt"},
		{"github.com/seed-53d105c9/courier/worker/limiter", "limiter.txt"},
		{"github.com/seed-53d105c9/courier/worker/admin", "admin.txt"},
		{"github.com/seed-53d105c9/courier/worker/rediskeys", "rediskeys.txt"},
	} {
		t.Run(pkg.file, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), goTool(t), "doc", "-all", pkg.path)
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("go doc -all %s: %v", pkg.path, err)
			}
			file := filepath.Join("testdata", "api", pkg.file)
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
			if !bytes.Equal(got, want) {
				t.Errorf("the public API of %s differs from %s: if the change is meant, run\n"+
					"\tgo test ./worker -run TestPublicAPI -update\nand commit the snapshot.\n%s",
					pkg.path, file, lineDiff(string(want), string(got)))
			}
		})
	}
}

// goTool returns the go command on PATH, else $GOROOT/bin/go.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command on PATH or in $GOROOT: %v", err)
	}
	return p
}

// lineDiff lists the lines only in want (-) and only in got (+), in order.
func lineDiff(want, got string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range bytes.Split([]byte(s), []byte("\n")) {
			m[string(l)]++
		}
		return m
	}
	w, g := count(want), count(got)
	var out bytes.Buffer
	for _, l := range bytes.Split([]byte(want), []byte("\n")) {
		if g[string(l)] == 0 {
			out.WriteString("- " + string(l) + "\n")
		} else {
			g[string(l)]--
		}
	}
	for _, l := range bytes.Split([]byte(got), []byte("\n")) {
		if w[string(l)] == 0 {
			out.WriteString("+ " + string(l) + "\n")
		} else {
			w[string(l)]--
		}
	}
	return out.String()
}

package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

// built holds, per package path, the binary Build made of it in this test
// process (or why it could not), so each is built once however many tests
// run it.
var (
	builtMu sync.Mutex
	built   = map[string]*buildResult{}
)

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// Build compiles the main package pkg (an import path, or "." for the
// package under test) with go build, once per test process, and returns
// the binary's path: for tests that run a command as its users do, as a
// process. The binary lives in a temporary directory removed when Main
// tears down. go test puts its own GOROOT/bin first on PATH, so the
// toolchain is the one running the tests.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	builtMu.Lock()
	b := built[pkg]
	if b == nil {
		b = &buildResult{}
		built[pkg] = b
	}
	builtMu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "courier-build-")
		if err != nil {
			b.err = err
			return
		}
		onStop(func() error { return os.RemoveAll(dir) })
		name := path.Base(pkg)
		if pkg == "." {
			wd, _ := os.Getwd()
			name = filepath.Base(wd)
		}
		b.path = filepath.Join(dir, name)
		out, err := exec.CommandContext(t.Context(), "go", "build", "-o", b.path, pkg).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

package api

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oapiCodegen is the generator TestOpenAPICodegen runs, pinned: the latest
// v2 release when it was written (go list -m -versions
// github.com/oapi-codegen/oapi-codegen/v2).
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// TestOpenAPICodegen: oapi-codegen, the Go generator clients of the API
// are likely to use, makes types and a client of openapi.json, and they
// build. (It refuses a document in which two components would make one Go
// type, as a parameter and a schema both named Queue once did.) It runs
// the generator from the module proxy, in a module of its own, through
// the Go module cache: about 15 s the first time, a few after.
func TestOpenAPICodegen(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs oapi-codegen from the module proxy; run without -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("needs the go command: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), openAPI, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/courierapi\n\ngo 1.24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "courierapi"), 0o750); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, goTool, args...)
		cmd.Dir = dir
		// The generated module resolves its own requirements; it is no
		// part of a workspace.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("go %s: %s", args[0], time.Since(start).Round(time.Millisecond))
	}
	run("run", oapiCodegen, "-generate", "types,client", "-package", "courierapi", "-o", "courierapi/courierapi.go", "openapi.json")
	run("mod", "tidy")
	run("build", "./...")
	run("vet", "./...")
}

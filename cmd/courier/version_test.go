package main

import (
	"regexp"
	"runtime"
	"testing"

	"github.com/seed-53d105c9/courier/worker"
)

// TestVersion: courier version prints the release, written once in the
// library (worker.Version), with the revision stamped beside it ("dev" in a
// test binary, which no -X stamps).
func TestVersion(t *testing.T) {
	t.Parallel()
	want := "courier " + worker.Version + " (dev) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := runCLI(t, t.Context(), args...)
		if code != 0 || stdout != want {
			t.Errorf("%v: exit %d, stdout %q; want %q", args, code, stdout, want)
		}
	}
	code, stdout, _ := runCLI(t, t.Context(), "version", "--json")
	v := decodeJSON[map[string]string](t, stdout)
	if code != 0 || v["version"] != worker.Version || v["revision"] != "dev" || v["go"] != runtime.Version() || v["os"] != runtime.GOOS || v["arch"] != runtime.GOARCH || len(v) != 5 {
		t.Errorf("version --json: exit %d, %s", code, stdout)
	}
}

// TestReleaseIsSemver: the release number is MAJOR.MINOR.PATCH without a
// "v", so that "v" + worker.Version is the library's tag and "cmd/v" +
// worker.Version the daemon's (docs/upgrading.md, "Cutting a release").
func TestReleaseIsSemver(t *testing.T) {
	t.Parallel()
	if !regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`).MatchString(worker.Version) {
		t.Errorf("worker.Version = %q, want MAJOR.MINOR.PATCH", worker.Version)
	}
}

// TestBuildInfoMetric: courier_build_info carries the release and the
// revision in labels of their own, and the Go version.
func TestBuildInfoMetric(t *testing.T) {
	t.Parallel()
	families, err := newMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"version": worker.Version, "revision": "dev", "goversion": runtime.Version()}
	for _, f := range families {
		if f.GetName() != "courier_build_info" {
			continue
		}
		if len(f.GetMetric()) != 1 {
			t.Fatalf("courier_build_info has %d series, want 1", len(f.GetMetric()))
		}
		got := map[string]string{}
		for _, l := range f.GetMetric()[0].GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(want) {
			t.Errorf("courier_build_info labels %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("courier_build_info{%s=%q}, want %q", k, got[k], v)
			}
		}
		return
	}
	t.Fatal("no courier_build_info in the registry")
}

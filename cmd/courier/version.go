package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
)

// versionJSON is what courier version --json prints.
type versionJSON struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// defineVersion is courier version (and courier --version).
func defineVersion(fs *flag.FlagSet, _ string) runFunc {
	asJSON := addJSONFlag(fs)
	return func(_ context.Context, std streams) error {
		v := versionJSON{Version: version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
		if *asJSON {
			return writeJSON(std.out, v)
		}
		fmt.Fprintf(std.out, "courier %s %s %s/%s\n", v.Version, v.Go, v.OS, v.Arch)
		return nil
	}
}

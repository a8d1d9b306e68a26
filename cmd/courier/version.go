package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"

	"github.com/seed-53d105c9/courier/worker"
)

// revision is the source revision the binary was built from, stamped by make
// build and the Dockerfile: -ldflags "-X main.revision=$(git describe --tags
// --always --dirty)"; "dev" in a plain go build. The release number is not
// stamped: it is worker.Version, written once in the library.
var revision = "dev"

// version is the release and the revision, "0.1.0 (a448b88)": what courier
// version prints, what the daemon reports to its queues' fleets and puts in
// its traces' service.version.
var version = worker.Version + " (" + revision + ")"

// versionJSON is what courier version --json prints.
type versionJSON struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// defineVersion is courier version (and courier --version).
func defineVersion(fs *flag.FlagSet, _ string) runFunc {
	asJSON := addJSONFlag(fs)
	return func(_ context.Context, std streams) error {
		v := versionJSON{Version: worker.Version, Revision: revision, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
		if *asJSON {
			return writeJSON(std.out, v)
		}
		fmt.Fprintf(std.out, "courier %s %s %s/%s\n", version, v.Go, v.OS, v.Arch)
		return nil
	}
}

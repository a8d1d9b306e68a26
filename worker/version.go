package worker

import "runtime/debug"

// Version is the release of Courier this source is, for programs that
// report what they run (courier version prints it, its metric
// courier_build_info carries it): the release of this library (its module
// tag is "v" + Version) and of the courier daemon built from the same tree
// (tag "cmd/v" + Version). It is the one place the number is written;
// CHANGELOG.md lists what each release changed and docs/upgrading.md what
// a release may change.
const Version = "0.1.0"

// modulePath is this module's path, as the build information names it.
const modulePath = "github.com/seed-53d105c9/courier"

// moduleVersion is Config.Version's default: the version of this module
// in the program's build information (the main module's when the program
// is courier itself, else the dependency's), or "(devel)".
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if info.Main.Path == modulePath && info.Main.Version != "" {
		return info.Main.Version
	}
	for _, m := range info.Deps {
		if m.Path == modulePath && m.Version != "" {
			return m.Version
		}
	}
	return "(devel)"
}

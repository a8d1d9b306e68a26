package worker

import "runtime/debug"

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

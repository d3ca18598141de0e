// Package buildinfo reports agentd's version, from the module build
// information the Go toolchain embeds (a tagged module version, or the VCS
// revision of a source build).
package buildinfo

import "runtime/debug"

// Base is the release line of this source tree, used when the build
// carries no module version (go run, go build in a checkout).
const Base = "0.1.0"

// Version returns the version string, e.g. "0.1.0" or "0.1.0-dev+3f2a1c9".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Base + "-dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 7 {
			return Base + "-dev+" + s.Value[:7]
		}
	}
	return Base + "-dev"
}

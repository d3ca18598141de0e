// Package buildinfo reports agentd's version, commit and Go version: from
// the linker flags of a release build (make release), else from the
// module build information the Go toolchain embeds (the module version of
// `go install ...@vX`, or the VCS revision of a source build).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Base is the release line of this source tree, used when the build
// carries no module version (go run, go build in a checkout).
const Base = "0.1.0"

// Set by make release: -ldflags "-X github.com/agentd/agentd/internal/buildinfo.version=v0.1.0
// -X github.com/agentd/agentd/internal/buildinfo.commit=<git revision>".
var version, commit string

// Version returns the version string, e.g. "v0.1.0" or "0.1.0-dev+3f2a1c9".
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Base + "-dev"
	}
	return fromBuild(bi.Main.Version, bi.Settings)
}

func fromBuild(mainVersion string, settings []debug.BuildSetting) string {
	if mainVersion != "" && mainVersion != "(devel)" {
		return mainVersion
	}
	if rev := setting(settings, "vcs.revision"); len(rev) >= 7 {
		return Base + "-dev+" + rev[:7]
	}
	return Base + "-dev"
}

// Commit returns the source revision the binary was built from: the one
// make release stamped, the VCS revision of a source build ("-dirty"
// when the tree had changes), the revision a pseudo-version names
// (v0.0.0-20260101000000-3f2a1c9e8d7b), or "unknown" (a tagged module
// version built by go install carries none).
func Commit() string {
	if commit != "" {
		return commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return commitOf(bi.Main.Version, bi.Settings)
}

func commitOf(mainVersion string, settings []debug.BuildSetting) string {
	if rev := setting(settings, "vcs.revision"); rev != "" {
		if setting(settings, "vcs.modified") == "true" {
			rev += "-dirty"
		}
		return rev
	}
	// A pseudo-version ends in -yyyymmddhhmmss-<12 hex digits>.
	if i := strings.LastIndexByte(mainVersion, '-'); i > 0 {
		if rev := strings.TrimSuffix(mainVersion[i+1:], "+incompatible"); len(rev) == 12 && isHex(rev) {
			return rev
		}
	}
	return "unknown"
}

// GoVersion returns the Go toolchain the binary was built with.
func GoVersion() string { return runtime.Version() }

// Line is what `agentd version` and `agentd --version` print.
func Line() string {
	return fmt.Sprintf("agentd %s\ncommit %s\n%s %s/%s\n", Version(), Commit(), GoVersion(), runtime.GOOS, runtime.GOARCH)
}

func setting(settings []debug.BuildSetting, key string) string {
	for _, s := range settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

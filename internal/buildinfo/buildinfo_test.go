package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestFromBuild: the version and commit read from each kind of build.
func TestFromBuild(t *testing.T) {
	rev := "3f2a1c9e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"
	for _, tc := range []struct {
		name                    string
		main                    string
		settings                []debug.BuildSetting
		wantVersion, wantCommit string
	}{
		{"go install of a tag", "v0.2.0", nil, "v0.2.0", "unknown"},
		{"go install of a pseudo-version", "v0.0.0-20261127154000-3f2a1c9e8d7b", nil, "v0.0.0-20261127154000-3f2a1c9e8d7b", "3f2a1c9e8d7b"},
		{"go install of a pre-release", "v0.2.0-rc.1", nil, "v0.2.0-rc.1", "unknown"},
		{"source build", "(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}}, Base + "-dev+3f2a1c9", rev},
		{"source build with changes", "(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}, Base + "-dev+3f2a1c9", rev + "-dirty"},
		{"source build without VCS", "(devel)", nil, Base + "-dev", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuild(tc.main, tc.settings); got != tc.wantVersion {
				t.Errorf("version %q, want %q", got, tc.wantVersion)
			}
			if got := commitOf(tc.main, tc.settings); got != tc.wantCommit {
				t.Errorf("commit %q, want %q", got, tc.wantCommit)
			}
		})
	}
}

//go:build !linux

package residency

// ReleaseExecutable does nothing outside Linux.
func ReleaseExecutable() (Released, error) { return Released{}, nil }

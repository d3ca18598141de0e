//go:build !linux

package proctree

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Stat needs /proc; it always fails here.
func Stat(pid int) (Proc, error) {
	return Proc{}, fmt.Errorf("stat process %d: %w", pid, errors.ErrUnsupported)
}

// All needs /proc; it finds nothing here.
func All() []Proc { return nil }

// Descendants needs /proc; it finds nothing here.
func Descendants(int) []Proc { return nil }

// Group needs /proc; it finds nothing here.
func Group(int) []Proc { return nil }

// Alive reports whether pid exists, by sending it signal 0 (which
// Windows does not support: there it always reports false). A zombie
// counts as alive here.
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// Terminate sends SIGTERM to leader alone: its descendants cannot be
// found here.
func Terminate(leader int, _ []Proc) {
	if p, err := os.FindProcess(leader); err == nil {
		_ = p.Signal(syscall.SIGTERM)
	}
}

// KillTree kills leader alone: its descendants cannot be found here.
func KillTree(leader int, _ []Proc) {
	if p, err := os.FindProcess(leader); err == nil {
		_ = p.Kill()
	}
}

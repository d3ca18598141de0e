//go:build !unix

package mcpclient

import (
	"errors"
	"os/exec"
)

// stdioSupported says whether stdio servers can be run (and killed) here.
const stdioSupported = false

type groupSignal int

const (
	sigTerm groupSignal = iota
	sigKill
)

// ownGroup is a no-op where process groups do not exist.
func ownGroup(*exec.Cmd) {}

// signalGroup cannot reach a group here; stdio servers are refused on
// such systems by validateServer.
func signalGroup(int, groupSignal) error {
	return errors.New("process groups are not supported on this system")
}

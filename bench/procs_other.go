//go:build !linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// The process-tree bookkeeping needs /proc; elsewhere the bench signals
// only the processes it started.

func ownGroup(*exec.Cmd) {}

func becomeSubreaper() {}

func descendants(int) []int { return nil }

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

func terminate(pid int, _ []int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

func killTree(pid int, _ []int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func killOrphans() {}

func rssKB(int) (int64, error) { return 0, errors.New("rss: needs /proc (linux)") }

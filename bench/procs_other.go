//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"time"
)

// Process groups, the subreaper and RSS need Linux; elsewhere the bench
// signals only the processes it started (see proctree).

func ownGroup(*exec.Cmd) {}

func becomeSubreaper() {}

func killOrphans() {}

func rssKB(int) (int64, error) { return 0, errors.New("rss: needs /proc (linux)") }

func fdCount(int) (int, error) { return 0, errors.New("fds: needs /proc (linux)") }

func threadCount(int) (int, error) { return 0, errors.New("threads: needs /proc (linux)") }

func cpuTime(int) (time.Duration, error) { return 0, errors.New("cpu time: needs /proc (linux)") }

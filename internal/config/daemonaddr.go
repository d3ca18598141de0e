package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// daemonRecord is what a running `agentd start` writes to Home/daemon.json:
// where it listens, for the client commands of the same config, which
// otherwise only know listen from the file and miss a daemon started
// with `start --listen` elsewhere.
type daemonRecord struct {
	Addr   string `json:"addr"`
	PID    int    `json:"pid"`
	Config string `json:"config"`
}

// DaemonFile is where a running daemon records its address.
func (c *Config) DaemonFile() string { return filepath.Join(c.Home, "daemon.json") }

// RecordDaemonAddr records that this process serves c on addr, for
// DaemonAddr. The returned function removes the record, unless another
// daemon has replaced it since.
func (c *Config) RecordDaemonAddr(addr string) (remove func(), err error) {
	rec := daemonRecord{Addr: addr, PID: os.Getpid(), Config: c.File}
	data, _ := json.Marshal(rec)
	file := c.DaemonFile()
	tmp := file + fmt.Sprintf(".%d.tmp", rec.PID)
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return func() {}, fmt.Errorf("record the daemon's address: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return func() {}, fmt.Errorf("record the daemon's address: %w", err)
	}
	return func() {
		if cur, ok := readDaemonRecord(file); ok && cur == rec {
			os.Remove(file)
		}
	}, nil
}

// DaemonAddr is where client commands find the daemon: AGENTD_ADDR if
// set, else the address a live `agentd start` of this same config file
// recorded, else Listen.
func (c *Config) DaemonAddr() string {
	if v, ok := c.lookup("AGENTD_ADDR"); ok && v != "" {
		return v
	}
	if rec, ok := readDaemonRecord(c.DaemonFile()); ok && rec.Config == c.File && rec.Addr != "" && alive(rec.PID) {
		return rec.Addr
	}
	return c.Listen
}

func readDaemonRecord(file string) (daemonRecord, bool) {
	var rec daemonRecord
	data, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(data, &rec) != nil {
		return rec, false
	}
	return rec, true
}

// alive reports whether process pid exists (a record left by a daemon
// that was killed is ignored).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

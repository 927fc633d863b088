//go:build !unix

package localmodel

import (
	"errors"
	"os"
	"os/exec"
)

type signal int

const (
	sigTerm signal = iota
	sigKill
)

// setProcessGroup does nothing where there are no process groups: Stop kills
// ollama serve alone.
func setProcessGroup(*exec.Cmd) {}

func signalGroup(p *os.Process, _ signal) error {
	err := p.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

func groupAlive(pid int) bool { return processAlive(pid) }

// processAlive reports whether pid exists (FindProcess opens it on Windows).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

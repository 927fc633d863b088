//go:build unix

package localmodel

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setProcessGroup puts ollama serve at the head of its own process group, so
// that Stop reaches the runner processes it starts as well.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
}

// signalGroup sends sig to the process group led by p. A group that is already
// gone is not an error.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether any process of the group led by pid is left.
func groupAlive(pid int) bool {
	return syscall.Kill(-pid, 0) == nil
}

// processAlive reports whether pid exists.
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

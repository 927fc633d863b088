package localmodel

import "syscall"

// setParentDeathSignal asks Linux to send SIGTERM to ollama serve if the
// process that started it dies without calling Stop (a test binary killed by
// -timeout). On SIGTERM ollama serve stops its runners and exits, so nothing
// is left behind.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGTERM
}

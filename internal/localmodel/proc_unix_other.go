//go:build unix && !linux

package localmodel

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}

package redisproc

import "syscall"

// SysProcAttr returns the attributes of a child process (redis-server,
// courier) that make the kernel kill it when its parent dies without
// cleaning up (a timeout panic, a kill), so that none is left behind.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package testkit

import "syscall"

// procAttr makes the kernel kill a redis-server when the test binary dies
// without reaching Main's teardown (a timeout panic, a kill).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package chaos

import "syscall"

// procAttr makes the kernel kill a child (redis-server, courier) when the
// chaos process dies without cleaning up, so none is left behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

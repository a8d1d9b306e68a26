//go:build !linux

package redistest

import "syscall"

// procAttr has nothing to add outside Linux; Main stops the servers.
func procAttr() *syscall.SysProcAttr { return nil }

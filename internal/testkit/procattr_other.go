//go:build !linux

package testkit

import "syscall"

// procAttr has nothing to add outside Linux; Main stops the servers.
func procAttr() *syscall.SysProcAttr { return nil }

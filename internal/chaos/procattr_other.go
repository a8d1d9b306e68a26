//go:build !linux

package chaos

import "syscall"

// procAttr sets nothing: only Linux kills children with their parent.
func procAttr() *syscall.SysProcAttr { return nil }

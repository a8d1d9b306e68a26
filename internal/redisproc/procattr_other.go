//go:build !linux

package redisproc

import "syscall"

// SysProcAttr returns nil: only Linux kills children with their parent, so
// elsewhere the parent must stop them itself.
func SysProcAttr() *syscall.SysProcAttr { return nil }

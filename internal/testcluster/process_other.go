//go:build !linux

package testcluster

import "syscall"

// sysProcAttr: no Pdeathsig outside Linux; Close must run.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

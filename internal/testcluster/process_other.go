//go:build !linux

package testcluster

import (
	"syscall"
	"time"
)

// sysProcAttr: no Pdeathsig outside Linux; Close must run.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// cpu is not read outside Linux.
func (p *process) cpu() time.Duration { return 0 }

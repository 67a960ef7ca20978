package tiering_test

import "syscall"

// minioProcAttr makes the kernel kill MinIO if the test binary dies without
// running TestMain's clean-up (a panic, a timeout, kill -9).
func minioProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

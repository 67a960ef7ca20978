package miniotest

import "syscall"

// procAttr makes the kernel kill MinIO if the test binary dies without
// running its clean-up (a panic, a timeout, kill -9).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

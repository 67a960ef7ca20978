package pgtest

import "syscall"

// procAttr runs the server as uid/gid (when asUser) and makes the kernel
// kill it if the test binary dies without running its clean-up.
func procAttr(asUser bool, uid, gid uint32) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if asUser {
		attr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	}
	return attr
}

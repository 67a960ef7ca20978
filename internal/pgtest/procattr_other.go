//go:build !linux

package pgtest

import "syscall"

// procAttr runs the server as uid/gid when asUser; without Pdeathsig the
// server outlives a test binary that dies without its clean-up.
func procAttr(asUser bool, uid, gid uint32) *syscall.SysProcAttr {
	if !asUser {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
}

//go:build !linux

package miniotest

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }

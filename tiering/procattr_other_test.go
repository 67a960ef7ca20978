//go:build !linux

package tiering_test

import "syscall"

func minioProcAttr() *syscall.SysProcAttr { return nil }

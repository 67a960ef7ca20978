package main

import (
	"os"
	"syscall"
)

// fdatasync flushes f's data (not all of its metadata), as dd's
// conv=fdatasync.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

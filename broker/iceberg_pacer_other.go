//go:build !linux

package broker

import "errors"

// readCPUTimes: the pacer needs a thread's CPU time (Linux's
// RUSAGE_THREAD); elsewhere the Iceberg writer runs unthrottled.
func readCPUTimes() (cpuTimes, error) {
	return cpuTimes{}, errors.New("no per-thread CPU time on this OS")
}

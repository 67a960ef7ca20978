package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the part of a container's memory limit the Go heap
// may grow to before the collector works harder to stay under it: the rest
// is for the page cache's accounting, goroutine stacks and what the runtime
// does not count.
const memoryLimitShare = 0.9

// cgroupMemoryFiles are where a process finds its container's memory limit:
// cgroup v2's memory.max, then cgroup v1's memory.limit_in_bytes.
var cgroupMemoryFiles = []string{"memory.max", "memory/memory.limit_in_bytes"}

// containerMemoryLimit reads the memory limit of the cgroup under root
// (/sys/fs/cgroup), false when there is none ("max", v1's huge
// "unlimited" value, no cgroup files).
func containerMemoryLimit(root string) (int64, bool, error) {
	for _, name := range cgroupMemoryFiles {
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, false, err
		}
		v := strings.TrimSpace(string(data))
		if v == "max" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %q is not a byte count", name, v)
		}
		// cgroup v1 says "unlimited" with a page-rounded MaxInt64.
		if n <= 0 || n >= math.MaxInt64/2 {
			return 0, false, nil
		}
		return n, true, nil
	}
	return 0, false, nil
}

// applyContainerMemoryLimit gives the server a soft memory limit
// (runtime/debug.SetMemoryLimit) of memoryLimitShare of its container's
// limit, unless GOMEMLIMIT chose one: Go's collector does not look at
// cgroups, so without it a heap growing towards the container's limit is
// killed by the kernel instead of collected harder. It returns the limit
// set (0: none) for the log.
func applyContainerMemoryLimit(getenv func(string) string, cgroupRoot string) (int64, error) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	limit, ok, err := containerMemoryLimit(cgroupRoot)
	if err != nil || !ok {
		return 0, err
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return soft, nil
}

// serverGCPercent is the server's GOGC. A broker's live heap is small next
// to what it moves (records go from socket to file and file to socket
// without living on the heap), so at Go's default of 100 it collects many
// times a second under load, and on a busy node the mark phase's CPU and
// assist stalls show up as produce latency. 400 lets the heap grow to five
// times the live heap between collections; in a container the soft memory
// limit (applyContainerMemoryLimit) still makes the collector work harder
// before the limit is reached.
const serverGCPercent = 400

// gcPolicy sets the runtime's GC percent to pct unless the user chose one
// with GOGC, and returns the percent in force.
func gcPolicy(getenv func(string) string, pct int) int {
	if getenv("GOGC") != "" {
		cur := debug.SetGCPercent(-1) // read the runtime's value back
		debug.SetGCPercent(cur)
		return cur
	}
	debug.SetGCPercent(pct)
	return pct
}

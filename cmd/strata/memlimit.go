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

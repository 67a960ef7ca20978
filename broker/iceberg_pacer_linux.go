package broker

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// readCPUTimes reads this process's and the calling thread's CPU time
// (getrusage) and the host's busy and total jiffies (/proc/stat; left
// unknown if it cannot be read).
func readCPUTimes() (cpuTimes, error) {
	var self, thread unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &self); err != nil {
		return cpuTimes{}, fmt.Errorf("getrusage: %w", err)
	}
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &thread); err != nil {
		return cpuTimes{}, fmt.Errorf("getrusage of the thread: %w", err)
	}
	out := cpuTimes{process: rusageTime(&self), writer: rusageTime(&thread)}
	if stat, err := os.ReadFile("/proc/stat"); err == nil {
		out.systemBusy, out.systemTotal, out.systemCPUs = parseProcStat(stat)
	}
	return out, nil
}

func rusageTime(ru *unix.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// parseProcStat reads the first line of /proc/stat ("cpu user nice system
// idle iowait irq softirq steal guest guest_nice", in jiffies, over all
// CPUs): busy is all but idle and iowait (guest time is already in user),
// and counts the per-CPU lines. cpus is 0 if the text is not that.
func parseProcStat(stat []byte) (busy, total uint64, cpus int) {
	sc := bufio.NewScanner(bytes.NewReader(stat))
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("cpu")) {
			break
		}
		if !first {
			cpus++
			continue
		}
		first = false
		fields := bytes.Fields(line)
		if len(fields) < 8 || string(fields[0]) != "cpu" {
			return 0, 0, 0
		}
		for i, f := range fields[1:min(len(fields), 9)] {
			n, err := strconv.ParseUint(string(f), 10, 64)
			if err != nil {
				return 0, 0, 0
			}
			total += n
			if i != 3 && i != 4 { // idle, iowait
				busy += n
			}
		}
	}
	return busy, total, cpus
}

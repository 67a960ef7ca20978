package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	kill9DirEnv        = "STRATA_STORAGE_KILL9_DIR"
	kill9BatchRecords  = 3
	kill9SegmentBytes  = 256 << 10
	kill9CheckpointGap = 37
)

// kill9Batch is the deterministic i-th batch the child appends.
func kill9Batch(t testing.TB, i int64) []byte {
	records := make([]testRecord, kill9BatchRecords)
	for r := range records {
		records[r] = testRecord{value: kill9Value(i, r), timestamp: i}
	}
	return makeBatch(t, batchSpec{codec: int8(i % 5), records: records})
}

func kill9Value(i int64, r int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("batch %d record %d;", i, r)), int(i%40)+1)
}

// TestKill9Child is the process TestKill9 kills: it appends forever and
// reports each acknowledged append on stdout.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv(kill9DirEnv)
	if dir == "" {
		t.Skip("helper process for TestKill9")
	}
	cfg := DefaultConfig()
	cfg.SegmentBytes = kill9SegmentBytes
	cfg.IndexIntervalBytes = 512
	l, err := Open(dir, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := l.LogEndOffset() / kill9BatchRecords; ; i++ {
		res, err := appendWith(l, AppendOptions{LeaderEpoch: int32(i / 500)}, kill9Batch(t, i))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", res.LastOffset)
		if i%kill9CheckpointGap == 0 {
			if err := l.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestKill9 kills a process appending to a log at arbitrary moments and
// checks that every acknowledged record survives, intact and in order.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := filepath.Join(t.TempDir(), "topic-0")
	var acked int64 = -1
	for round, acks := range []int{150, 400, 1, 700, 90} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.count=1")
		cmd.Env = append(os.Environ(), kill9DirEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		for seen := 0; seen < acks && sc.Scan(); {
			if offset, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
				if acked, err = strconv.ParseInt(offset, 10, 64); err != nil {
					t.Fatal(err)
				}
				seen++
			}
		}
		cmd.Process.Kill() // SIGKILL while it keeps appending
		cmd.Wait()

		l, err := Open(dir, DefaultConfig(), Options{})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if l.LogEndOffset() <= acked {
			t.Fatalf("round %d: acknowledged offset %d lost, log end %d", round, acked, l.LogEndOffset())
		}
		if unopened, total := unopenedSegments(l); unopened != total {
			t.Fatalf("round %d: Open left %d of %d segment files open", round, total-unopened, total)
		}
		verifyKill9Log(t, l)
		t.Logf("round %d: acked %d, recovered end %d, %d segments, stats %+v", round, acked, l.LogEndOffset(), l.NumSegments(), l.RecoveryStats())
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func verifyKill9Log(t *testing.T, l *Log) {
	t.Helper()
	for offset := int64(0); offset < l.LogEndOffset(); {
		c, err := l.Read(offset, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		data, err := c.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range completeBatches(t, data) {
			i := h.BaseOffset / kill9BatchRecords
			if h.BaseOffset != offset || h.PartitionLeaderEpoch != int32(i/500) {
				t.Fatalf("batch at %d has base %d epoch %d", offset, h.BaseOffset, h.PartitionLeaderEpoch)
			}
			records, err := DecodeRecords(data[:h.Size()])
			if err != nil {
				t.Fatal(err)
			}
			for r, rec := range records {
				if !bytes.Equal(rec.Value, kill9Value(i, r)) || rec.Timestamp != i {
					t.Fatalf("record %d differs", rec.Offset)
				}
			}
			data = data[h.Size():]
			offset = h.LastOffset() + 1
		}
	}
}

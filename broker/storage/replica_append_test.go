package storage

import (
	"bytes"
	"errors"
	"testing"
)

// A follower appends a leader's batches as they are: offsets (with a
// compacted leader's gaps) and leader epochs survive, and the epoch cache
// answers OffsetForLeaderEpoch as the leader's does.
func TestAppendKeepOffsets(t *testing.T) {
	leader, _ := newTestLog(t, testConfig(), nil)
	appendRaw(t, leader, 3, valueBatch(t, 2, 10, 1000))
	appendRaw(t, leader, 5, valueBatch(t, 3, 10, 2000))
	chunk, err := leader.Read(0, 1<<20, leader.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	raw := readChunk(t, chunk)

	// A third batch placed at offset 10 (a gap, as after cleaning).
	gap := valueBatch(t, 1, 10, 3000)
	stampBatch(gap, 10, 7, 0)

	follower, _ := newTestLog(t, testConfig(), nil)
	res, err := appendWith(follower, AppendOptions{KeepOffsets: true, LeaderEpoch: 99}, raw, gap)
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstOffset != 0 || res.LastOffset != 10 || follower.LogEndOffset() != 11 {
		t.Fatalf("append = %+v, end %d; want [0, 10], end 11", res, follower.LogEndOffset())
	}
	got := readAll(t, follower, 0)
	want := []struct {
		base  int64
		epoch int32
	}{{0, 3}, {2, 5}, {10, 7}}
	if len(got) != len(want) {
		t.Fatalf("read %d batches, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].BaseOffset != w.base || got[i].PartitionLeaderEpoch != w.epoch {
			t.Errorf("batch %d at %d epoch %d, want %d epoch %d", i, got[i].BaseOffset, got[i].PartitionLeaderEpoch, w.base, w.epoch)
		}
	}
	if e, end := follower.EndOffsetForEpoch(5); e != 5 || end != 10 {
		t.Errorf("EndOffsetForEpoch(5) = %d, %d; want 5, 10", e, end)
	}
	// The bytes are the leader's, unchanged.
	fchunk, err := follower.Read(0, 1<<20, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readChunk(t, fchunk), raw) {
		t.Error("follower bytes differ from the leader's")
	}

	// A batch below the log end is refused and changes nothing.
	again := valueBatch(t, 1, 10, 4000)
	stampBatch(again, 10, 7, 0)
	if _, err := appendWith(follower, AppendOptions{KeepOffsets: true}, again); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("append below the end: %v, want ErrCorruptBatch", err)
	}
	if follower.LogEndOffset() != 11 {
		t.Fatalf("end moved to %d", follower.LogEndOffset())
	}
}

func readChunk(t *testing.T, c FileChunk) []byte {
	t.Helper()
	b, err := c.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A follower far behind its leader's log start restarts its log there.
func TestTruncateFully(t *testing.T) {
	l, dir := newTestLog(t, testConfig(), nil)
	appendRaw(t, l, 1, valueBatch(t, 5, 10, 1000))
	if err := l.TruncateFully(1000); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 1000 || l.LogEndOffset() != 1000 {
		t.Fatalf("range [%d, %d), want [1000, 1000)", l.LogStartOffset(), l.LogEndOffset())
	}
	b := valueBatch(t, 2, 10, 2000)
	stampBatch(b, 1000, 4, 0)
	if _, err := appendWith(l, AppendOptions{KeepOffsets: true}, b); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l2 := openLog(t, dir, testConfig(), nil)
	defer l2.Close()
	if l2.LogStartOffset() != 1000 || l2.LogEndOffset() != 1002 {
		t.Fatalf("after reopen [%d, %d), want [1000, 1002)", l2.LogStartOffset(), l2.LogEndOffset())
	}
}

package replica

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// checkpointFiles are the files a replica's Checkpoint may write.
var checkpointFiles = []string{ProducerSnapshotFile, "recovery-checkpoint", "leader-epoch-checkpoint"}

// statCheckpointFiles returns the FileInfo of each checkpoint file in dir
// (nil where absent). Every write is a new file renamed into place, so an
// unchanged inode (os.SameFile) means the file was not rewritten.
func statCheckpointFiles(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	out := map[string]os.FileInfo{}
	for _, name := range checkpointFiles {
		fi, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err == nil:
			out[name] = fi
		case !os.IsNotExist(err):
			t.Fatal(err)
		}
	}
	return out
}

// TestCheckpointSkipsUnchangedFiles: Checkpoint and Close write a
// partition's producer snapshot and recovery checkpoint only when they
// changed since the last write (issue 18: 10,000 idle partitions cost
// 10,000 atomic writes per checkpoint round, and closing them three
// each). A partition that never received a record writes none at all; a
// changed one is rewritten; a reopened idle one is not.
func TestCheckpointSkipsUnchangedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p-0")
	r, err := Open(dir, Options{NodeID: 1, Storage: storage.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	leadAlone(r, 1)
	for range 2 {
		if err := r.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	if files := statCheckpointFiles(t, dir); len(files) != 0 {
		t.Fatalf("empty partition wrote %v, want no checkpoint file", files)
	}

	appendOne := func(seq int32) {
		t.Helper()
		if res := r.Append(context.Background(), batchOf(t, dataBatch(t, 7, 0, seq, 1, false)), AppendOptions{}); res.Code != 0 {
			t.Fatalf("append: %+v", res)
		}
	}
	appendOne(0)
	if err := r.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	written := statCheckpointFiles(t, dir)
	for _, name := range []string{ProducerSnapshotFile, "recovery-checkpoint"} {
		if written[name] == nil {
			t.Fatalf("%s not written after an append", name)
		}
	}
	sameAs := func(what string, want map[string]os.FileInfo) {
		t.Helper()
		got := statCheckpointFiles(t, dir)
		for name, fi := range want {
			if got[name] == nil || !os.SameFile(got[name], fi) {
				t.Fatalf("%s: %s rewritten, want it untouched", what, name)
			}
		}
	}
	if err := r.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	sameAs("idle checkpoint", written)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	sameAs("close of an idle partition", written)

	if r, err = Open(dir, Options{NodeID: 1, Storage: storage.DefaultConfig()}); err != nil {
		t.Fatal(err)
	}
	leadAlone(r, 1)
	if err := r.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	sameAs("checkpoint after reopening", written)

	appendOne(1)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	changed := statCheckpointFiles(t, dir)
	for _, name := range []string{ProducerSnapshotFile, "recovery-checkpoint"} {
		if os.SameFile(changed[name], written[name]) {
			t.Fatalf("%s not rewritten after an append", name)
		}
	}

	// The files written last are the ones a restart reads: the producer
	// table knows both sequences.
	if r, err = Open(dir, Options{NodeID: 1, Storage: storage.DefaultConfig()}); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	leadAlone(r, 1)
	if res := r.Append(context.Background(), batchOf(t, dataBatch(t, 7, 0, 1, 1, false)), AppendOptions{}); !res.Duplicate || res.BaseOffset != 1 {
		t.Fatalf("retry of the last batch after reopen: %+v, want a duplicate at 1", res)
	}
	if err := r.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	sameAs("checkpoint after a duplicate (no append)", changed)
}

// TestOpenTornPartitionMetadata: partition.metadata is written without an
// fsync and becomes durable with the log's first flush, so only a power
// loss before any flush completed can leave it empty or cut short: nothing
// in the directory was durable and its topic is unknown, so Open starts it
// afresh for the topic ID it is given (the metadata quorum's); so does a
// missing file. A whole file naming another topic has its directory
// replaced too.
func TestOpenTornPartitionMetadata(t *testing.T) {
	idA := [16]byte{1, 2, 3}
	idB := [16]byte{9, 9, 9}
	for _, tc := range []struct {
		name     string
		metadata func(whole string) string
	}{
		{"empty", func(string) string { return "" }},
		{"cut short", func(whole string) string { return whole[:len(whole)-5] }},
		{"no newline", func(whole string) string { return whole[:len(whole)-1] }},
		{"another topic", func(string) string { return "topic_id: " + cluster.TopicID(idB).String() + "\n" }},
		{"missing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p-0")
			r, err := Open(dir, Options{NodeID: 1, TopicID: idA, Storage: storage.DefaultConfig()})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Created() {
				t.Fatal("Created() false for a new directory")
			}
			leadAlone(r, 1)
			if res := r.Append(context.Background(), batchOf(t, dataBatch(t, -1, 0, 0, 2, false)), AppendOptions{}); res.Code != 0 {
				t.Fatalf("append: %+v", res)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, PartitionMetadataFile)
			whole, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.metadata == nil {
				err = os.Remove(path)
			} else {
				err = os.WriteFile(path, []byte(tc.metadata(string(whole))), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}

			if r, err = Open(dir, Options{NodeID: 1, TopicID: idA, Storage: storage.DefaultConfig()}); err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.Created() {
				t.Fatal("Created() false after rewriting partition.metadata")
			}
			if got, _ := os.ReadFile(path); string(got) != string(whole) {
				t.Fatalf("partition.metadata %q, want %q", got, whole)
			}
			if end := r.LogEndOffset(); end != 0 {
				t.Fatalf("log end %d, want 0: the directory was not started afresh", end)
			}
		})
	}
}

// TestOpenNewPartitionMakesNoDirectory: a new partition's replica creates
// nothing on disk (issue 18: creating 10,000 partitions was three inodes
// each, and the file system's inode allocation was most of the time);
// flushes and closes of the empty log keep it so, and a reopen is again a
// new partition. The first append makes the directory with
// partition.metadata and the .log; the records survive a reopen.
func TestOpenNewPartitionMakesNoDirectory(t *testing.T) {
	id := [16]byte{4, 5, 6}
	dir := filepath.Join(t.TempDir(), "p-0")
	open := func() *Replica {
		t.Helper()
		r, err := Open(dir, Options{NodeID: 1, TopicID: id, Storage: storage.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	absent := func(when string) {
		t.Helper()
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the directory exists (%v); want none", when, err)
		}
	}
	r := open()
	absent("after Open")
	leadAlone(r, 1)
	if err := r.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	absent("after a checkpoint and Close of the empty log")

	r = open()
	if !r.Created() || r.LogEndOffset() != 0 {
		t.Fatalf("reopened: created %v, end %d", r.Created(), r.LogEndOffset())
	}
	leadAlone(r, 1)
	if res := r.Append(context.Background(), batchOf(t, dataBatch(t, -1, 0, 0, 2, false)), AppendOptions{}); res.Code != 0 {
		t.Fatalf("append: %+v", res)
	}
	raw, err := os.ReadFile(filepath.Join(dir, PartitionMetadataFile))
	if err != nil || string(raw) != partitionMetadata(id) {
		t.Fatalf("partition.metadata after the first append: %q %v", raw, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = open()
	defer r.Close()
	if r.Created() || r.LogEndOffset() != 2 {
		t.Fatalf("reopened after the append: created %v, end %d, want false, 2", r.Created(), r.LogEndOffset())
	}
}

package replica

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-streaming/strata/broker/storage"
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

package replica

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/strata-streaming/strata/broker/storage"
)

// TestMoveLogReadersSwitch: MoveLog takes the log to another directory
// with its records; a reader still holding the old log gets
// storage.ErrClosed and reads the same records from SettledLog, while a
// closed replica's SettledLog stays closed.
func TestMoveLogReadersSwitch(t *testing.T) {
	r := openTestReplica(t, 1)
	r.SetRole(&Role{Leader: 1, LeaderEpoch: 0, Replicas: []int32{1}, ISR: []int32{1}}, 0)
	for seq := int32(0); seq < 30; seq += 3 {
		if res := r.Append(context.Background(), batchOf(t, dataBatch(t, -1, 0, seq, 3, false)), AppendOptions{}); res.Code != 0 {
			t.Fatalf("append: %+v", res)
		}
	}
	old := r.Log()
	before, err := old.Read(0, 1<<20, 30, true)
	if err != nil || before.Len == 0 {
		t.Fatalf("read before the move: %+v %v", before, err)
	}
	dst := filepath.Join(t.TempDir(), "moved")
	if err := r.MoveLog(context.Background(), dst+"-future", dst, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Read(0, 1<<20, 30, true); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("the old log after the move: %v, want ErrClosed", err)
	}
	settled := r.SettledLog()
	if settled.Dir() != dst {
		t.Fatalf("settled log in %s, want %s", settled.Dir(), dst)
	}
	after, err := settled.Read(0, 1<<20, 30, true)
	if err != nil || after.Len != before.Len || settled.LogEndOffset() != 30 {
		t.Fatalf("read after the move: %d bytes (want %d), end %d, %v", after.Len, before.Len, settled.LogEndOffset(), err)
	}
	r.Close()
	if _, err := r.SettledLog().Read(0, 1<<20, 30, true); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("a closed replica's settled log: %v, want ErrClosed", err)
	}
}

package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
)

// leadAlone makes r the leader of a partition with an ISR of itself.
func leadAlone(r *Replica, self int32) {
	r.SetRole(&Role{Leader: self, LeaderEpoch: 1, PartitionEpoch: 1, Replicas: []int32{self}, ISR: []int32{self}}, time.Now().UnixMilli())
}

// batchOf prepares raw for Append.
func batchOf(t *testing.T, raw []byte) Batch {
	t.Helper()
	headers, err := storage.ValidateBatches(raw)
	if err != nil {
		t.Fatal(err)
	}
	return Batch{Records: raw, Headers: headers, NowMs: time.Now().UnixMilli()}
}

func TestAppendIdempotentRetryAfterReopen(t *testing.T) {
	dir := t.TempDir()
	for _, damage := range []struct {
		name string
		edit func(path string)
	}{
		{"intact snapshot", func(string) {}},
		{"checksum mismatch", func(path string) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			raw[len(raw)-3] ^= 0x20 // inside the JSON body
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated snapshot", func(path string) {
			if err := os.Truncate(path, 6); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			d := filepath.Join(dir, damage.name)
			r, err := Open(d, Options{NodeID: 1, Storage: storage.DefaultConfig()})
			if err != nil {
				t.Fatal(err)
			}
			leadAlone(r, 1)
			first := dataBatch(t, 7, 0, 0, 3, false)
			if res := r.Append(context.Background(), batchOf(t, first), AppendOptions{}); res.Code != 0 || res.BaseOffset != 0 {
				t.Fatalf("first append: %+v", res)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(d, ProducerSnapshotFile))
			if err != nil || string(raw[:4]) != "SPS2" {
				t.Fatalf("snapshot %q…, %v: want the SPS2 layout", raw[:min(len(raw), 4)], err)
			}
			damage.edit(filepath.Join(d, ProducerSnapshotFile))

			r, err = Open(d, Options{NodeID: 1, Storage: storage.DefaultConfig()})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			leadAlone(r, 1)
			// The retry is recognised whether the table came from the
			// snapshot or, the snapshot unusable, from the log.
			if res := r.Append(context.Background(), batchOf(t, dataBatch(t, 7, 0, 0, 3, false)), AppendOptions{}); res.Code != 0 || !res.Duplicate || res.BaseOffset != 0 {
				t.Fatalf("retry after reopen: %+v, want a duplicate at 0", res)
			}
			if res := r.Append(context.Background(), batchOf(t, dataBatch(t, 7, 0, 5, 1, false)), AppendOptions{}); res.Code != kerr.OutOfOrderSequenceNumber.Code {
				t.Fatalf("sequence gap after reopen: %+v, want OUT_OF_ORDER_SEQUENCE_NUMBER", res)
			}
			if end := r.LogEndOffset(); end != 3 {
				t.Fatalf("log end %d, want 3", end)
			}
		})
	}
}

func TestDecodeProducerSnapshotLegacy(t *testing.T) {
	legacy := `{"next_offset":2,"producers":{"1":{"epoch":3,"batches":[],"last_update_ms":5}}}`
	snap, err := decodeProducerSnapshot([]byte(legacy))
	if err != nil || snap.NextOffset != 2 || snap.Producers[1] == nil || snap.Producers[1].Epoch != 3 || snap.Producers[1].CurrentTxnFirstOffset != noTxn {
		t.Fatalf("legacy snapshot: %+v, %v", snap, err)
	}
	if _, err := decodeProducerSnapshot([]byte("SPS2\x00\x00\x00\x00{}")); !errors.Is(err, storage.ErrCorruption) {
		t.Fatalf("bad checksum: %v, want a corruption error", err)
	}
}

// TestAppendVerifiedTxnRefusedAfterMarker: a transactional batch that
// opens its producer's transaction is verified with no lock held; a marker
// for that producer written meanwhile (the transaction ended) refuses it
// with INVALID_TXN_STATE, so it cannot open a transaction no marker will
// close. Without a marker it is appended, and the next batch of the same
// transaction needs no verification.
func TestAppendVerifiedTxnRefusedAfterMarker(t *testing.T) {
	r := openTestReplica(t, 1)
	leadAlone(r, 1)
	ctx := context.Background()

	// A transaction that ended while its batch was being verified.
	var calls int
	res := r.Append(ctx, batchOf(t, dataBatch(t, 9, 0, 0, 2, true)), AppendOptions{
		VerifyTxn: func(_ context.Context, pid int64, epoch int16) *kerr.Error {
			calls++
			if _, _, err := r.WriteTxnMarker(pid, epoch, false, 0); err != nil {
				t.Errorf("marker: %v", err)
			}
			return nil
		},
	})
	if res.Code != kerr.InvalidTxnState.Code || calls != 1 {
		t.Fatalf("batch verified across a marker: %+v after %d checks, want INVALID_TXN_STATE", res, calls)
	}
	if end := r.LogEndOffset(); end != 1 || r.LastStableOffset() != 1 {
		t.Fatalf("log end %d, last stable %d: want only the marker", end, r.LastStableOffset())
	}

	// The coordinator's refusal answers the produce.
	res = r.Append(ctx, batchOf(t, dataBatch(t, 10, 0, 0, 1, true)), AppendOptions{
		VerifyTxn: func(context.Context, int64, int16) *kerr.Error { return kerr.InvalidTxnState },
	})
	if res.Code != kerr.InvalidTxnState.Code {
		t.Fatalf("refused verification: %+v", res)
	}

	// Verified and appended; then no more checks in this transaction.
	calls = 0
	verify := AppendOptions{VerifyTxn: func(context.Context, int64, int16) *kerr.Error { calls++; return nil }}
	if res := r.Append(ctx, batchOf(t, dataBatch(t, 11, 0, 0, 2, true)), verify); res.Code != 0 || res.BaseOffset != 1 {
		t.Fatalf("verified batch: %+v", res)
	}
	if res := r.Append(ctx, batchOf(t, dataBatch(t, 11, 0, 2, 2, true)), verify); res.Code != 0 || calls != 1 {
		t.Fatalf("second batch: %+v after %d checks, want 1", res, calls)
	}
	if lso := r.LastStableOffset(); lso != 1 {
		t.Fatalf("last stable offset %d with the transaction open at 1", lso)
	}
	if len(r.mu.verifying) != 0 {
		t.Fatalf("verifications left registered: %v", r.mu.verifying)
	}
}

// TestAppendDefersFlush: with flush.messages=1 every append is fsynced,
// after the replica's lock is released (it can be taken while the append
// returns), and the records are durable when Append returns.
func TestAppendDefersFlush(t *testing.T) {
	cfg := storage.DefaultConfig()
	cfg.FlushMessages = 1
	r, err := Open(t.TempDir(), Options{NodeID: 1, Storage: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	leadAlone(r, 1)
	for i := range 3 {
		if res := r.Append(context.Background(), batchOf(t, dataBatch(t, -1, 0, 0, 1, false)), AppendOptions{}); res.Code != 0 || res.BaseOffset != int64(i) {
			t.Fatalf("append %d: %+v", i, res)
		}
		if n := r.storage().UnflushedRecords(); n != 0 {
			t.Fatalf("append %d left %d records unflushed with flush.messages=1", i, n)
		}
	}
}

func TestAwaitReplicated(t *testing.T) {
	const self, follower = 1, 2
	r := openTestReplica(t, self)
	r.SetRole(&Role{Leader: self, LeaderEpoch: 3, PartitionEpoch: 1, Replicas: []int32{self, follower}, ISR: []int32{self, follower}}, time.Now().UnixMilli())
	res := r.Append(context.Background(), batchOf(t, dataBatch(t, -1, 0, 0, 4, false)), AppendOptions{})
	if res.Code != 0 || r.HighWatermark() != 0 {
		t.Fatalf("append %+v, high watermark %d: want 0 until the follower fetches", res, r.HighWatermark())
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := r.AwaitReplicated(short, res.LastOffset, res.LeaderEpoch); err != ErrReplicationTimeout {
		t.Fatalf("no follower fetch: %v, want ErrReplicationTimeout", err)
	}
	done := make(chan error, 1)
	go func() { done <- r.AwaitReplicated(context.Background(), res.LastOffset, res.LeaderEpoch) }()
	if c := r.FollowerFetched(follower, 4, time.Now().UnixMilli()); c != nil {
		t.Fatalf("an ISR member proposed for the ISR: %+v", c)
	}
	if err := <-done; err != nil || r.HighWatermark() != 4 {
		t.Fatalf("after the follower fetched: %v, high watermark %d", err, r.HighWatermark())
	}
	if err := r.AwaitReplicated(context.Background(), res.LastOffset, res.LeaderEpoch+1); err != ErrNotLeader {
		t.Fatalf("another epoch: %v, want ErrNotLeader", err)
	}
}

// TestMarkerCoordinatorEpochFenced: a marker whose coordinator epoch is
// older than the producer's last marker here (a deposed coordinator load's,
// arriving late) is refused with TRANSACTION_COORDINATOR_FENCED and ends
// nothing — the producer's next transaction stays open — also after a
// reopen, whether the producer state comes from the snapshot or from
// replaying the log.
func TestMarkerCoordinatorEpochFenced(t *testing.T) {
	for _, fromSnapshot := range []bool{true, false} {
		dir := t.TempDir()
		r, err := Open(dir, Options{NodeID: 1, Storage: storage.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		leadAlone(r, 1)
		ctx := context.Background()
		if res := r.Append(ctx, batchOf(t, dataBatch(t, 5, 0, 0, 1, true)), AppendOptions{}); res.Code != 0 {
			t.Fatalf("first transaction: %+v", res)
		}
		if _, _, err := r.WriteTxnMarker(5, 0, true, 7); err != nil {
			t.Fatalf("marker at coordinator epoch 7: %v", err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if !fromSnapshot {
			if err := os.Remove(filepath.Join(dir, ProducerSnapshotFile)); err != nil {
				t.Fatal(err)
			}
		}
		r, err = Open(dir, Options{NodeID: 1, Storage: storage.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		leadAlone(r, 1)
		// The producer's next transaction begins here.
		next := r.Append(ctx, batchOf(t, dataBatch(t, 5, 0, 1, 1, true)), AppendOptions{})
		if next.Code != 0 {
			t.Fatalf("second transaction: %+v", next)
		}
		if _, _, err := r.WriteTxnMarker(5, 0, true, 6); !errors.Is(err, kerr.TransactionCoordinatorFenced) {
			t.Fatalf("snapshot %v: a marker of coordinator epoch 6 after 7: %v, want TRANSACTION_COORDINATOR_FENCED", fromSnapshot, err)
		}
		if lso := r.LastStableOffset(); lso != next.BaseOffset {
			t.Fatalf("snapshot %v: last stable offset %d: the fenced marker ended the open transaction at %d", fromSnapshot, lso, next.BaseOffset)
		}
		if _, _, err := r.WriteTxnMarker(5, 0, false, 7); err != nil {
			t.Fatalf("snapshot %v: a marker of the current coordinator epoch: %v", fromSnapshot, err)
		}
		if lso, end := r.LastStableOffset(), r.LogEndOffset(); lso != end {
			t.Fatalf("snapshot %v: last stable offset %d after the abort, want the log end %d", fromSnapshot, lso, end)
		}
		r.Close()
	}
}

// TestTruncateToRebuildsProducers: a follower's divergent tail is cut and
// the producer state rebuilt from what remains, so the leader's batch with
// the truncated sequence is appended again, not taken for a duplicate;
// the high watermark never stays above the new log end.
func TestTruncateToRebuildsProducers(t *testing.T) {
	const self, leader = 2, 1
	r := openTestReplica(t, self)
	r.SetRole(&Role{Leader: leader, LeaderEpoch: 1, PartitionEpoch: 1, Replicas: []int32{leader, self}, ISR: []int32{leader, self}}, time.Now().UnixMilli())
	r.TakeTruncation()
	withOffset := func(raw []byte, base int64) []byte {
		out := append([]byte(nil), raw...)
		binary.BigEndian.PutUint64(out, uint64(base))
		return out
	}
	first := withOffset(dataBatch(t, 3, 0, 0, 2, false), 0)
	tail := withOffset(dataBatch(t, 3, 0, 2, 2, false), 2)
	if err := r.AppendReplica(append(first, tail...), 1, 4); err != nil {
		t.Fatal(err)
	}
	if r.LogEndOffset() != 4 || r.HighWatermark() != 4 {
		t.Fatalf("log end %d, high watermark %d; want 4, 4", r.LogEndOffset(), r.HighWatermark())
	}
	if err := r.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	if r.LogEndOffset() != 2 || r.HighWatermark() != 2 {
		t.Fatalf("after truncation: log end %d, high watermark %d; want 2, 2", r.LogEndOffset(), r.HighWatermark())
	}
	// Now this node leads: the same producer's batch at sequence 2 is new.
	r.SetRole(&Role{Leader: self, LeaderEpoch: 2, PartitionEpoch: 2, Replicas: []int32{leader, self}, ISR: []int32{self}}, time.Now().UnixMilli())
	res := r.Append(context.Background(), batchOf(t, dataBatch(t, 3, 0, 2, 2, false)), AppendOptions{})
	if res.Code != 0 || res.Duplicate || res.BaseOffset != 2 {
		t.Fatalf("the truncated sequence again: %+v, want appended at 2", res)
	}
}

package replica

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/storage"
)

// dataBatch is a v2 record batch of n records from producer pid at epoch
// (pid -1: not idempotent), starting at sequence seq, transactional if
// asked, encoded with franz-go's kmsg.
func dataBatch(t testing.TB, pid int64, epoch int16, seq int32, n int, transactional bool) []byte {
	t.Helper()
	var records []byte
	for i := range n {
		rec := kmsg.Record{OffsetDelta: int32(i), Value: fmt.Appendf(nil, "value-%d-%d", seq, i)}
		body := rec.AppendTo(nil)
		// kmsg writes the length as given: encode the body, then prefix
		// its real length.
		rec.Length = int32(len(body) - 1) // the zero length took one byte
		records = rec.AppendTo(records)
	}
	attrs := int16(0)
	if transactional {
		attrs |= 0x10
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, Attributes: attrs, LastOffsetDelta: int32(n - 1),
		FirstTimestamp: 1_000, MaxTimestamp: 1_000, ProducerID: pid, ProducerEpoch: epoch,
		FirstSequence: seq, NumRecords: int32(n), Records: records,
	}
	if pid < 0 {
		b.ProducerEpoch, b.FirstSequence = -1, -1
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], storage.CRC32C(raw[21:]))
	if _, err := storage.ValidateBatches(raw); err != nil {
		t.Fatalf("dataBatch: %v", err)
	}
	return raw
}

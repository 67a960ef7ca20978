package storage

import (
	"encoding/binary"
	"fmt"
)

// Control record types (the type field of a control record's key).
const (
	ControlTypeAbort  int16 = 0
	ControlTypeCommit int16 = 1
)

// controlKeySize is a control record key: version int16, type int16.
const controlKeySize = 4

// ControlRecordType returns the type of a control batch (attribute bit 5)
// at the start of batch: the type field of its first record's key
// (ControlTypeAbort, ControlTypeCommit, or another type, such as KRaft's,
// returned as is). ok is false, with no error, when the batch is not a
// control batch or holds no record (a cleaned-out marker). The batch's
// lengths and CRC are checked; a malformed batch or key (shorter than 4
// bytes, negative version) yields an error wrapping ErrCorruptBatch or
// ErrUnsupportedMagic. It never panics.
func ControlRecordType(batch []byte) (typ int16, ok bool, err error) {
	typ, _, ok, err = ControlRecord(batch)
	return typ, ok, err
}

// ControlRecord is ControlRecordType that also returns, for a COMMIT or
// ABORT marker, the coordinator epoch in its value (Kafka's
// EndTransactionMarker), -1 when the value is too short to hold one.
func ControlRecord(batch []byte) (typ int16, coordinatorEpoch int32, ok bool, err error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return 0, -1, false, err
	}
	if !h.IsControl() {
		return 0, -1, false, nil
	}
	if h, err = checkBatch(batch); err != nil {
		return 0, -1, false, err
	}
	if h.NumRecords == 0 {
		return 0, -1, false, nil
	}
	records, err := DecodeRecords(batch[:h.Size()])
	if err != nil {
		return 0, -1, false, err
	}
	key := records[0].Key
	if len(key) < controlKeySize {
		return 0, -1, false, fmt.Errorf("%w: control record key of %d bytes", ErrCorruptBatch, len(key))
	}
	// Like Kafka, a version above 0 is read as version 0: the type comes next.
	if version := int16(binary.BigEndian.Uint16(key)); version < 0 {
		return 0, -1, false, fmt.Errorf("%w: control record key version %d", ErrCorruptBatch, version)
	}
	typ = int16(binary.BigEndian.Uint16(key[2:]))
	coordinatorEpoch = -1
	if value := records[0].Value; (typ == ControlTypeAbort || typ == ControlTypeCommit) && len(value) >= 6 {
		coordinatorEpoch = int32(binary.BigEndian.Uint32(value[2:]))
	}
	return typ, coordinatorEpoch, true, nil
}

// EncodeControlBatch builds the v2 control batch of a transaction marker
// (Kafka's EndTransactionMarker) for producer producerID at epoch: one
// record with key {version 0, type COMMIT or ABORT} and value {version 0,
// coordinatorEpoch}, attributes transactional and control, no compression,
// CreateTime timestamp, base offset 0 (Append stamps it), base sequence -1.
// The bytes pass ValidateBatches.
func EncodeControlBatch(producerID int64, epoch int16, commit bool, coordinatorEpoch int32, timestamp int64) []byte {
	typ := ControlTypeAbort
	if commit {
		typ = ControlTypeCommit
	}
	be := binary.BigEndian
	var key, value []byte
	key = be.AppendUint16(be.AppendUint16(key, 0), uint16(typ))
	value = be.AppendUint32(be.AppendUint16(value, 0), uint32(coordinatorEpoch))
	out := encodeBatch([][]byte{key}, [][]byte{value}, producerID, epoch, attrTransactional|attrControl, timestamp)
	be.PutUint32(out[offsetLeaderEpoch:], 0)
	be.PutUint32(out[offsetCRC:], batchCRC(out))
	return out
}

package storage

import "encoding/binary"

// EncodeKVBatch builds an uncompressed v2 record batch of key/value
// records with CreateTime timestamp, base offset 0 (Append stamps it) and
// no sequence: what the broker's coordinators write to their internal
// topics. producerID -1 makes a plain batch; otherwise the batch carries
// the producer id and epoch, transactional if asked (a TxnOffsetCommit's
// offsets). A nil key or value is encoded as null. The bytes pass
// ValidateBatches.
func EncodeKVBatch(keys, values [][]byte, producerID int64, epoch int16, transactional bool, timestamp int64) []byte {
	attrs := uint16(0)
	if transactional {
		attrs = attrTransactional
	}
	if producerID < 0 {
		producerID, epoch = -1, -1
	}
	return encodeBatch(keys, values, producerID, epoch, attrs, timestamp)
}

// encodeBatch is the one record-batch encoder of the broker's own
// batches (EncodeKVBatch, EncodeControlBatch): uncompressed, every record
// at timestamp, partition leader epoch -1, base sequence -1.
func encodeBatch(keys, values [][]byte, producerID int64, epoch int16, attrs uint16, timestamp int64) []byte {
	be := binary.BigEndian
	out := make([]byte, BatchHeaderSize)
	var rec []byte
	for i := range keys {
		rec = rec[:0]
		rec = append(rec, 0)                      // record attributes
		rec = binary.AppendVarint(rec, 0)         // timestamp delta
		rec = binary.AppendVarint(rec, int64(i))  // offset delta
		rec = appendNullableBytes(rec, keys[i])   // key
		rec = appendNullableBytes(rec, values[i]) // value
		rec = binary.AppendVarint(rec, 0)         // no headers
		out = binary.AppendVarint(out, int64(len(rec)))
		out = append(out, rec...)
	}
	be.PutUint64(out[offsetBaseOffset:], 0)
	be.PutUint32(out[offsetLength:], uint32(len(out)-batchLogOverhead))
	be.PutUint32(out[offsetLeaderEpoch:], 0xffffffff) // -1
	out[offsetMagic] = 2
	be.PutUint16(out[offsetAttributes:], attrs)
	be.PutUint32(out[offsetLastOffsetDelta:], uint32(max(len(keys)-1, 0)))
	be.PutUint64(out[offsetFirstTimestamp:], uint64(timestamp))
	be.PutUint64(out[offsetMaxTimestamp:], uint64(timestamp))
	be.PutUint64(out[offsetProducerID:], uint64(producerID))
	be.PutUint16(out[offsetProducerEpoch:], uint16(epoch))
	be.PutUint32(out[offsetBaseSequence:], 0xffffffff) // -1
	be.PutUint32(out[offsetNumRecords:], uint32(len(keys)))
	be.PutUint32(out[offsetCRC:], batchCRC(out))
	return out
}

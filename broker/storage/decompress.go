package storage

// Decompress inflates data compressed with a Kafka codec (CodecNone,
// CodecGzip, CodecSnappy, CodecLZ4, CodecZstd) for callers outside record
// batches (KIP-714 telemetry payloads). Data that would inflate past limit
// bytes fails with an error wrapping ErrBatchTooLarge before much more than
// limit bytes are allocated; malformed data wraps ErrCorruptBatch.
func Decompress(codec int8, data []byte, limit int) ([]byte, error) {
	return decompressLimit(codec, data, limit)
}

package storage

import "hash/crc32"

// Castagnoli is the CRC-32C (Castagnoli) table, the one checksum of the
// broker: record batches (bytes 21..end), recovery checkpoints and the
// segment checksums in tiering manifests. Use it with crc32.New for a
// streaming hash; CRC32C for a slice. Do not modify it.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the CRC-32C (Castagnoli) checksum of b.
func CRC32C(b []byte) uint32 {
	return crc32.Checksum(b, Castagnoli)
}

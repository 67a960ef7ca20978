// Package wal is the durable raft log of the metadata quorum: a small
// write-ahead log of raft entries and hard states in segment files, plus
// snapshot files, with torn-tail recovery and compaction.
//
// # Files
//
//	<dir>/0000000000000001.wal   segments, numbered in write order
//	<dir>/0000000000000002.wal
//	<dir>/<term>-<index>.snap    the latest snapshot (16 hex digits each)
//
// # Frames
//
// Segments are sequences of frames; a snapshot file is one frame. Integers
// are big-endian:
//
//	+-----------+-----------+--------+--------------------------+
//	| length    | crc       | kind   | payload                  |
//	| uint32    | uint32    | 1 byte | length-1 bytes           |
//	+-----------+-----------+--------+--------------------------+
//	length = 1 + len(payload); crc = CRC-32C (Castagnoli) of kind+payload
//
//	kind 1  entry       raftpb.Entry, protobuf
//	kind 2  hard state  raftpb.HardState, protobuf
//	kind 3  log reset   raftpb.SnapshotMetadata: a snapshot from the leader
//	                    replaced the log; earlier entries are void
//	kind 4  snapshot    raftpb.Snapshot, protobuf (.snap files only)
//
// # Durability and recovery
//
// Save appends the entries, then the hard state, and fsyncs before it
// returns; a raft message that depends on them is sent only after.
// (SaveMaybeSync skips the fsync when raft says only the commit index
// changed, which is safe to lose; a segment is always synced before the
// next one starts.) A crash
// can leave a torn or partly written frame at the end of the last segment:
// Open truncates the segment at the last whole, CRC-valid frame. A bad frame
// anywhere else is corruption (ErrCorrupt), as is a gap in the entries.
// Replay follows raft's rules: an entry at index i discards any entries at
// i and above written before it.
//
// SaveSnapshot writes the snapshot file atomically (temporary file, fsync,
// rename, directory fsync) and then removes older snapshot files. Compact
// removes whole leading segments whose entries are all at or below an
// index covered by a snapshot. Every new segment starts with the current
// hard state, so compaction never loses it.
package wal

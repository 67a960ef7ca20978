// Package storage is Strata's partition log: the on-disk store of one
// topic partition, in Kafka's own formats, so that a fetch can hand file
// ranges straight to sendfile.
//
// # Caller's duties
//
//  1. Open(dir, cfg, opts) each partition directory (<data-dir>/<topic>-<partition>/)
//     at startup; Open recovers it (see Recovery).
//  2. On produce: ValidateBatches(records), then Append(records, headers, opts).
//     Append rewrites base offsets and the leader epoch in place.
//  3. On fetch: Read(offset, maxBytes, highWatermark, minOneBatch) and send the
//     FileChunk; ListOffsets uses OffsetForTimestamp, MaxTimestamp,
//     LogStartOffset and LogEndOffset.
//  4. Periodically: MaybeRoll (segment.ms), ApplyRetention, FlushIfDue
//     (flush.ms; also closes deleted segments' files after
//     file.delete.delay.ms) and Checkpoint (bounds the work of the next
//     recovery; also whenever RecoveryPointBehind says so); for a compacted log, Clean (or CleanBelow, see Log
//     compaction); with remote storage, SealedSegments and
//     SetRemoteOffset before ApplyRetention (see Tiered storage).
//  5. Close on shutdown (it checkpoints), or Delete to drop the partition.
//  6. Transactions: write COMMIT/ABORT markers with EncodeControlBatch
//     through ValidateBatches and Append; after an ABORT marker,
//     RecordAbortedTxn; for a read_committed fetch, AbortedTxns (see
//     Transaction index). ControlRecordType reads a marker's type.
//
// # Directory layout
//
//	topic-0/
//	  00000000000000000000.log        segment: record batches, back to back
//	  00000000000000000000.index      offset index of that segment
//	  00000000000000000000.timeindex  time index of that segment
//	  00000000000000000000.txnindex   aborted transactions ending in that segment (only if any)
//	  00000000000000004711.log        next segment, named by its base offset
//	  ...
//	  recovery-checkpoint             what the last Checkpoint made durable
//	  leader-epoch-checkpoint         leader-epoch cache (Kafka's format)
//	  log-start-offset                log start offset set by DeleteRecordsBefore
//	  cleaner-offset-checkpoint       where the last clean stopped (compacted logs)
//	  *.cleaned, *.swap               a clean in progress (see Log compaction)
//
// Names are the base offset in 20 zero-padded digits. The last segment is
// the active one; appends go only there, and a single append never spans
// two segments.
//
// # Record batch (magic v2)
//
// A .log file is record batches exactly as producers sent them, with only
// baseOffset and partitionLeaderEpoch rewritten (both lie outside the CRC),
// plus, for message.timestamp.type=LogAppendTime, maxTimestamp and
// attribute bit 3 with the CRC recomputed. All integers are big-endian.
//
//	offset size field
//	     0    8 baseOffset            int64  offset of the first record
//	     8    4 batchLength           int32  bytes after this field (Size = 12 + batchLength)
//	    12    4 partitionLeaderEpoch  int32  stamped by Append
//	    16    1 magic                 int8   must be 2
//	    17    4 crc                   uint32 CRC-32C (Castagnoli) of bytes 21..end
//	    21    2 attributes            int16  bits 0-2 codec (0 none, 1 gzip, 2 snappy,
//	                                          3 lz4, 4 zstd), bit 3 timestamp type
//	                                          (1 = LogAppendTime), bit 4 transactional,
//	                                          bit 5 control
//	    23    4 lastOffsetDelta       int32  last offset = baseOffset + lastOffsetDelta
//	    27    8 firstTimestamp        int64
//	    35    8 maxTimestamp          int64
//	    43    8 producerId            int64
//	    51    2 producerEpoch         int16
//	    53    4 baseSequence          int32
//	    57    4 recordCount           int32
//	    61    … records, compressed as a whole when the codec is not 0
//
// Each record, after decompression (varints are zigzag, as protobuf sint):
//
//	length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
//	keyLength varint | key | valueLength varint | value |
//	headerCount varint | { headerKeyLength varint | key | headerValueLength varint | value }…
//
// A length of -1 is null. A record's timestamp is firstTimestamp +
// timestampDelta, or maxTimestamp for a LogAppendTime batch. Snappy comes
// either as one raw block or in the xerial framing Java clients use:
//
//	0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00 | version int32 | compatible int32 | { length int32 | raw snappy block }…
//
// lz4 is the lz4 frame format; gzip and zstd are their standard streams.
//
// A topic whose compression.type names a codec stores batches in other
// codecs recompressed (Recompress, recompress.go): the same header but for
// batchLength, the codec bits and the CRC, and the same records section
// bytes under the new codec. Decompression on the produce path is bounded
// by InflationLimit (16 × max.message.bytes, 1 MiB to 256 MiB).
//
// # Offset index (.index)
//
// Sparse, one 8-byte entry per index.interval.bytes of log, in order:
//
//	0        4        8
//	+--------+--------+
//	| relOff | pos    |   relOff uint32 = lastOffset of the batch - segment base offset
//	+--------+--------+   pos    uint32 = file position where that batch starts
//
// An entry is added for a batch when more than index.interval.bytes were
// written since the previous entry (the first batch of a segment has none:
// (base, 0) is implied). To find offset o: binary search for the last entry
// with relOff <= o - base, then read batch headers forward from its
// position (prefix preads of each header, skipping batchLength) to the
// first batch whose last offset is >= o.
//
// # Time index (.timeindex)
//
//	0                 8        12
//	+-----------------+--------+
//	| timestamp       | relOff |   timestamp int64 = max batch timestamp so far in the segment
//	+-----------------+--------+   relOff uint32   = last offset of the first batch reaching it - base
//
// Written at the same moments as offset index entries, but only when the
// segment's max timestamp grew, and once more when the segment is rolled, so
// the last entry of an inactive segment is its max timestamp. A lookup for
// ts takes the last entry with timestamp < ts: every record up to its offset
// is older than ts, so the search starts at that offset's batch.
//
// Both indexes live in memory (slices) and are appended to their files at
// flush, roll and checkpoint; segment.index.bytes bounds their size (the
// segment rolls first).
//
// # Transaction index (.txnindex)
//
// Kafka's format: one 34-byte entry per transaction aborted in the
// segment (its ABORT marker is in it), in increasing lastOffset order:
//
//	0       2              10             18             26             34
//	+-------+--------------+--------------+--------------+--------------+
//	|version| producerId   | firstOffset  | lastOffset   | lastStable-  |
//	| int16 | int64        | int64        | int64        | Offset int64 |
//	+-------+--------------+--------------+--------------+--------------+
//
// version is 0; firstOffset is the transaction's first record in the
// partition (possibly in an earlier segment), lastOffset its ABORT marker,
// lastStableOffset the partition's last stable offset once it aborted.
// The file exists once the segment has an entry; entries also live in
// memory. RecordAbortedTxn writes an entry at once (no fsync; flushes and
// checkpoints fsync it with the other indexes). AbortedTxns(from, upTo)
// returns the entries with lastOffset >= from and firstOffset < upTo,
// searching from the segment holding from until an entry's
// lastStableOffset reaches upTo, as Kafka's collectAbortedTransactions.
// Truncation drops entries at or after the cut; deleted segments take
// theirs along; a clean carries each entry into the output covering its
// lastOffset (its .txnindex goes through .cleaned and .swap with the other
// files, and a clean gives up if an entry was recorded in a segment it
// rewrites). Recovery loads the files and drops entries past the
// recovered end of their segment. A damaged file (length not a multiple
// of 34, bad version, entries out of order or below the segment) is
// removed with a warning and the segment's index is empty: the broker must
// rebuild those entries from its producer state; this package cannot tell
// which transactions aborted.
//
// # recovery-checkpoint
//
// Text, written atomically (temp file, fsync, rename, fsync dir) after a
// flush by Checkpoint:
//
//	version 1
//	next-offset 12345                    log end offset when flushed
//	segment 12000                        base offset of the then active segment
//	position 567890                      its size: bytes flushed, index entries too
//	max-timestamp 1700000000000          its max timestamp up to position
//	max-timestamp-offset 12340           last offset of the batch holding it
//	latest-epoch 7                       latest leader epoch then
//	crc32c 1a2b3c4d                      CRC-32C of all bytes above, hex
//
// # leader-epoch-checkpoint
//
// Kafka's text format, written atomically by Checkpoint when it changed:
//
//	0              version
//	2              number of entries
//	0 0            epoch startOffset
//	3 4711
//
// Between checkpoints the cache is in memory only; recovery rebuilds newer
// entries from partitionLeaderEpoch of the batches it scans.
//
// # log-start-offset
//
//	0              version
//	4711           log start offset
//
// Written atomically before DeleteRecordsBefore returns, so deleted records
// never reappear. The effective start is max(this, first segment's base),
// capped at the log end offset.
//
// # Durability
//
// Append returns once write() returned: a process crash (kill -9) loses
// nothing acknowledged, since the page cache survives it. fsync happens per
// flush.messages / flush.ms (Kafka's defaults: never, leaving durability to
// replication), on Flush, Checkpoint and Close. fsyncs run without the
// append lock, so appends continue during them. A directory without a
// recovery checkpoint (new, or created by a process that crashed before
// its first flush) is made durable — its files, itself, its entry in the
// parent — by the first flush of a log holding records, not before.
//
// # Recovery
//
// Open does, in order:
//
//  0. Complete or roll back a clean a crash interrupted (see Log
//     compaction).
//  1. Remove *.tmp and *.deleted files and index files without a .log.
//  2. Read recovery-checkpoint (ignored if damaged), leader-epoch-checkpoint
//     (if damaged or older than the checkpoint's latest epoch, the checkpoint
//     is ignored so that a full scan rebuilds the epochs),
//     cleaner-offset-checkpoint (ignored if damaged) and log-start-offset
//     (damaged: Open fails with ErrCorruptLog).
//  3. For each segment in offset order:
//     - wholly below the checkpointed segment: trusted. Its size comes from
//     stat(2) and its index files are loaded without opening the log file,
//     after light checks (whole entries, increasing, positions inside the
//     file, offsets below the next segment); a failed check rebuilds the
//     indexes by a scan. Its first batch's base offset must not be below
//     the file name (above it is fine: a cleaned segment keeps the name of
//     the first segment it replaced); that is checked when the file is
//     first opened (see Lazy open), a misnamed file then failing every use
//     with ErrCorruptLog.
//     - the checkpointed segment: its first `position` bytes are trusted with
//     the index entries below that position (later entries are dropped from
//     memory and file), and the scan starts at `position`.
//     - later segments (or all, without a checkpoint): scanned from 0.
//  4. A scan reads the batches sequentially in 1 MiB chunks and checks each
//     fully: header lengths, magic 2, CRC-32C, offsets increasing (and, at
//     position 0, not below the file name, else ErrCorruptLog). It rebuilds
//     index entries, the max timestamp and leader epochs as if appending. At
//     the first torn or corrupt batch the file is cut there, and every later
//     segment is deleted (it cannot follow on from a cut one).
//  5. Empty segments other than the first and the last are deleted (the
//     first may be one a clean emptied; its name keeps the log start
//     offset); overlapping segments are ErrCorruptLog. Each remaining
//     segment's .txnindex is loaded (see Transaction index). Without any
//     segment, one is created at the log start offset.
//  6. The epoch cache is cut to the recovered log end and start; if anything
//     was repaired (a tail cut, files removed, indexes rebuilt), a fresh
//     checkpoint is written at once. A tail that was only scanned is left
//     after the recovery point: the caller's background flusher moves it
//     (RecoveryPointBehind, then Checkpoint) once a segment rolls or the
//     active segment grows 64 MiB past it, so Open of an intact log writes
//     nothing and a restart rescans at most about that much.
//  7. Every segment file recovery opened (to scan, cut or check) is closed
//     before Open returns.
//
// So the work of a restart is bounded by what was written since the last
// checkpoint, not by the retained data; RecoveryStats reports it.
//
// # Lazy open
//
// An opened Log holds no file descriptor. A segment's .log file is opened
// on its first use (an append, a read, a truncation, a clean, an upload's
// SealedSegments) and then stays open until the segment is closed (Close)
// or, removed, its file.delete.delay.ms has passed, exactly as before:
// there is no closing of idle files, since a FileChunk handed to sendfile
// may still use the descriptor. An fsync of a file that was never opened
// goes by path (fsync(2) flushes the file, whatever the descriptor). The
// first use needs no lock: racing first users each open the file and the
// first to publish it wins (segmentFile). Before a segment's files are
// unlinked or its name is taken by a clean's output (retention,
// DeleteRecords, truncation, the swap), the segment is opened (pinned), so
// a reader holding its view reads the old file, never a missing or a new
// one. Running out of descriptors fails the one operation with
// ErrTooManyOpenFiles, which is not an I/O error of the log directory.
//
// So a node needs one descriptor per segment in use, not per segment: a
// partition that is neither written nor read after a restart costs none
// (Kafka keeps every segment open and needs an open-file limit above the
// segment count). Serving N partitions at once still holds at least N.
//
// # Fresh logs
//
// A log with no segment file yet — a new partition (Options.Fresh), or a
// restart that found none — has one unborn segment: its .log file is
// created by its first use, and an fsync of it before then has nothing
// to do. Opened with Options.Materialize, the log also has no directory:
// every write of a file in it (the unborn segment's creation, a
// checkpoint file, a truncation's new segment, the caller's own files
// through EnsureDir) first runs Materialize once, which makes the
// directory and whatever the caller keeps there. A log that is never
// written costs no file-system call at all; a flush or Close of it
// writes nothing, and the directory, once made, becomes durable with the
// first flush of records like any new directory.
//
// # Log compaction
//
// With cleanup.policy=compact (Config.Compact) Clean keeps, of the records
// below the active segment, the latest per key, as Kafka's log cleaner
// does; with compact,delete ApplyRetention also deletes by retention.ms and
// retention.bytes (Config.Delete), which it never does for compact alone.
//
// A pass is due when, over the cleanable segments (from the first of the
// log up to, excluding, the active one and the first segment holding a
// record newer than min.compaction.lag.ms), the dirty ones (from the
// cleaner checkpoint's first dirty offset on) hold at least
// min.cleanable.dirty.ratio of the bytes; or when the first dirty batch is
// older than max.compaction.lag.ms (the active segment also rolls at that
// age, so its records become cleanable); or when a kept tombstone's delete
// horizon has passed. A pass:
//
//  1. maps each key of the dirty segments to the offset of its latest
//     record there (at most 128 MiB of map; beyond, the pass stops at that
//     segment and the next one goes on);
//  2. reads every cleanable segment from the first, batch by batch (each
//     CRC-checked), and keeps a record unless its key maps to a later
//     offset, it has no key (Kafka refuses those on compacted topics), or
//     it is a tombstone whose batch's delete horizon has passed;
//  3. writes what it keeps into new segments, merging consecutive segments
//     while they fit segment.bytes and segment.index.bytes (the last
//     cleanable segment is always rewritten alone); a new segment is named
//     by the first segment it replaces, so it may start with a gap;
//  4. swaps them in (below) and writes cleaner-offset-checkpoint.
//
// Batches keep their place: a batch whose records all stay is copied byte
// for byte; one that loses some is re-encoded with the same base offset and
// lastOffsetDelta (its offset range is unchanged; offsets have gaps),
// leader epoch, producer id, epoch and base sequence, codec (recompressed)
// and timestamp type, each record with its offset delta, timestamp, key,
// value and headers; one that loses all is dropped, except that when the
// pass reaches the log end offset (the active segment is empty) its last
// batch stays with no records, as in Kafka, so that readers still reach
// the log end offset. Control and transactional batches are kept whole
// (aborted records and markers are not removed yet), and aborted-transaction
// entries are carried along (see Transaction index). The first segment of the log stays,
// even emptied, so that the log start offset does not move.
//
// Tombstones: a tombstone that is the latest of its key is kept by the pass
// that first cleans its batch, which stamps the batch with a delete horizon
// = now + delete.retention.ms (KIP-534: attribute bit 6 set, firstTimestamp
// = horizon, record timestamp deltas rebased so every record keeps its
// timestamp). The first pass at or after the horizon removes it; the
// earliest horizon kept is in the cleaner checkpoint, so that pass runs
// even if nothing else is dirty. A consumer that reads the key's older
// records has delete.retention.ms from the first clean to read the
// tombstone too.
//
// The swap, with every step before the commit undone by recovery and every
// step after it redone (a kill -9 anywhere leaves the old segments or the
// new ones, never a mix):
//
//	write B.log.cleaned, B.index.cleaned, B.timeindex.cleaned   one set per new segment B
//	  (and B.txnindex.cleaned if it has aborted transactions)
//	fsync them and the directory
//	refresh recovery-checkpoint                                 it now names the active segment
//	rename every *.cleaned to *.swap, fsync dir                 the first rename commits the pass
//	remove the replaced segments' files, fsync dir
//	rename every *.swap to its final name, fsync dir            an empty last segment is removed instead
//	publish the new segments; the old files close after file.delete.delay.ms
//	write cleaner-offset-checkpoint
//
// Recovery: without a *.swap file, *.cleaned files are removed (the old
// segments are intact). With one, the pass had committed and every
// *.cleaned file was complete: those left become *.swap; a B.log.swap
// replaces the segments whose base offset lies in [B, next B.log.swap),
// the last one only the segment B itself; the replaced segments' files are
// removed and every *.swap renamed into place.
//
// cleaner-offset-checkpoint, written atomically after each pass (lost or
// stale, it costs only work: a pass rereads more, or expired tombstones
// wait for the next pass):
//
//	version 1
//	first-dirty-offset 4711            everything below was cleaned by the last pass
//	tombstone-deadline 1700086400000   earliest delete horizon kept, -1 if none
//	crc32c 1a2b3c4d                    CRC-32C of all bytes above, hex
//
// A pass reads and writes with no lock but its own, and takes the flush
// lock only for the swap; readers and appends go on throughout. An I/O
// error after the commit closes the log (Kafka takes the log directory
// offline); reopening it completes the swap. Retention,
// truncation or record deletion that change the segments a pass read make
// it throw its output away (CleanResult.Aborted); Close abandons it.
// TruncateTo lowers the first dirty offset below the cut.
//
// Idempotent producers: the broker rebuilds producer state after a crash
// from its snapshot plus the batches after it, so it calls CleanBelow with
// the offset its snapshot covers; cleaning never touches batches above.
//
// # Tiered storage
//
// With remote.storage.enable (Config.Remote) the broker copies sealed
// segments to object storage and the log keeps only a local tail. The
// storage side of it:
//
//  1. SealedSegments(after) snapshots the sealed segments past the last
//     upload: offsets, size, max timestamp, the offset, time and
//     transaction indexes encoded from memory in the formats above
//     (DecodeTxnIndex parses the last), the leader epochs covering the segment
//     (EncodeEpochs writes them in the leader-epoch-checkpoint format) and a
//     duplicated descriptor of the .log, which stays readable even if the
//     segment is deleted meanwhile; the caller closes it. A compacted log
//     offers only segments below the cleaner's first dirty offset, so what
//     is uploaded has been cleaned at least once, and none that compaction
//     emptied (nothing to upload).
//  2. Once an upload is durable (and in the broker's manifest), the broker
//     calls SetRemoteOffset(next): every offset below next is remote. It is
//     kept in memory only; after Open the broker restores it from its
//     manifest. Until then it is -1 and no segment counts as uploaded.
//  3. ApplyRetention then deletes the local copies of uploaded segments
//     (next offset <= RemoteOffset) by local.retention.ms and
//     local.retention.bytes (-2: as retention.ms / retention.bytes; see
//     EffectiveLocalRetention), whatever the cleanup policy, or while they
//     lie below the log start offset. A segment not yet uploaded is kept,
//     with every one after it. The log start offset moves to the first kept
//     segment: it is the local log start; the broker tracks the remote one.
//  4. Reads of remote data use the downloaded index bytes with
//     DecodeOffsetIndex/DecodeTimeIndex and their Lookup (the same answers as the
//     in-memory indexes; malformed bytes yield ErrCorruptRemoteData), ranged
//     reads of the remote .log, and FindRecordAtOrAfterTimestamp for the
//     exact record of a timestamp lookup in one batch.
//  5. CreateAt(dir, base) creates an empty log starting at base (the
//     log-start-offset file and an empty segment named by base), for a
//     partition whose data is all remote.
//
// # Concurrency
//
// Reads (Read, ForEachBatch, OffsetForTimestamp, MaxTimestamp, the
// accessors) take a read lock only to snapshot segment state and then pread
// without locks; index slices are never modified in place below their
// published length. Appends and rolls serialize on an internal mutex;
// flushes, checkpoints, truncation, retention and record deletion on another
// (see the Log type for the lock order). A deleted segment's files are
// unlinked at once but its *os.File stays open for file.delete.delay.ms so
// in-flight FileChunks remain readable.
package storage

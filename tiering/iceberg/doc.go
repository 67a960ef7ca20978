// Package iceberg writes a topic as an Apache Iceberg v2 table in the object
// store: Parquet data files (arrow-go's pqarrow), manifests, manifest lists
// and table metadata (iceberg-go), put through tiering.ObjectStore. It knows
// Parquet and Iceberg, not Kafka requests: the broker hands it decoded
// records (Record) and decides when to commit.
//
// Layout under the table's prefix (iceberg/<namespace>/<topic> by default):
//
//	metadata/version-hint.text               N, for readers without a catalog
//	metadata/v1.metadata.json                the empty table (schema, hour spec)
//	metadata/vN.metadata.json                one per commit; snapshots, refs
//	                                         (the newest 1+previous-versions-max
//	                                         kept with delete-after-commit)
//	metadata/snap-<id>-1-<commit>.avro       manifest list of snapshot <id>
//	metadata/<commit>-m0.avro                manifest of the files one commit added
//	data/timestamp_hour=YYYY-MM-DD-HH/<n>-<commit>.parquet
//	                                         n counts the commit's files: an hour's
//	                                         rows past Config.TargetFileSize roll over
//
// Table schema (iceberg.mode=key_value):
//
//	key        binary    (null key: null)
//	value      binary    (tombstone: null)
//	headers    list<struct<key string, value binary>>  (order and repeats kept)
//	partition  int       required
//	offset     long      required
//	timestamp  timestamptz required, partitioned by hour(timestamp)
//
// Table schema (LayoutTyped: iceberg.mode=value_schema_id_prefix or
// value_schema_latest; typed.go has the type mapping):
//
//	kafka      struct<partition int, offset long, timestamp timestamptz,
//	           key binary, headers list<struct<key string, value binary>>>
//	           required, partitioned by hour(kafka.timestamp)
//	<field>…   the value's fields, optional, typed by its Avro, JSON Schema or Protobuf schema
//
// A typed table starts with the kafka column alone (schema 0); each commit
// merges the value schemas it was given by name (EvolveSchema): a new
// field gets new field IDs, existing ones keep theirs, and a changed
// schema becomes a new entry of the metadata's schemas and its
// current-schema-id. Files written earlier lack the new columns; readers
// resolve columns by field ID and read null.
//
// Exactly once: every snapshot's summary carries SummaryLastOffsets, a JSON
// object from Kafka partition to the last offset the table holds for it (the
// whole map, carried forward). Append drops records at or below it before
// writing, so re-appending after a crash, an unknown outcome or a leader
// change never duplicates a row, and a writer resumes from
// LastOffsets[p]+1.
//
// Commit order: data files, manifest, manifest list, vN+1.metadata.json,
// version-hint.text. Until vN+1 exists nothing written is referenced, so a
// crash leaves only unreferenced objects. Load reads the hint and then looks
// for later versions, so a crash between the metadata and the hint loses
// nothing; with no hint, or one naming a version deleted since, it starts
// from the newest vN.metadata.json listed. vN+1.metadata.json is created with PutIfAbsent
// (tiering.ConditionalPutter; S3 If-None-Match): of writers racing for it
// exactly one wins, the others reload and retry, so committers of one table
// on several nodes (partitions led by different nodes) never lose a commit.
//
// Compaction (Compact): the small files (below half the target) of a
// partition value are rewritten into files of about the target and swapped
// in by a "replace" snapshot — one manifest: new files ADDED, rewritten
// ones DELETED, every other live file EXISTING — that carries
// SummaryLastOffsets unchanged. It commits through the same
// compare-and-swap as Append: when an append lands first, the files it
// rewrote go in on top of the new state as they are (an append removes no
// file); when another compaction took some of its inputs, it starts over.
//
// Metadata versions: each version's metadata-log lists the
// Config.MetadataPreviousVersionsMax versions before it (Iceberg's
// write.metadata.previous-versions-max, 100 by default, written as that
// table property). With Config.MetadataDeleteAfterCommit (Iceberg's
// write.metadata.delete-after-commit.enabled) a commit then deletes the
// vK.metadata.json that fell out of the log, once older than
// Config.MetadataMinAge: the store keeps the current version and the ones
// its log lists. Deleting a version is safe for a racing writer because no
// commit attempt lasts MetadataMinAge (deleteOldVersions has the
// argument). Only files of Strata's naming are deleted, never another
// writer's (an engine's NNNNN-<uuid>.metadata.json).
//
// Pacing (Config.Pacer): Append and Compact call the Pacer between pieces
// of their CPU-heavy work — every PaceRows rows or PaceBytes bytes while
// Arrow columns are built, after every 4096 rows handed to the Parquet
// writer (buffered row groups of 64 Ki rows, so the pieces do not change
// the file's layout) and every PaceRows rows read back for a compaction.
// The Pacer may sleep; its error (a canceled context) fails the commit,
// which then references nothing.
//
// Orphans (RemoveOrphans): data files, manifests and manifest lists under
// data/ and metadata/ that no retained snapshot references (expired
// snapshots', compacted-away files', crashed commits') are deleted once
// older than the caller's safety age; with MetadataDeleteAfterCommit also
// the old metadata versions a commit's deletion left (a failed delete, a
// table that kept every version before). The hint is never deleted.
//
// Manifests and manifest lists are never rewritten, so Compact,
// RemoveOrphans and merging appends read them through a bounded cache of
// decoded ones by location (ManifestCache, which tables may share), and a
// Compact of the snapshot an earlier one found nothing to do in returns
// after reading the metadata.
package iceberg

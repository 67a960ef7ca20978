// Package replica is one partition replica a node hosts, as leader or
// follower: Kafka's Partition with its ProducerStateManager. It owns the
// local log (broker/storage), the role the metadata quorum assigned
// (leader, leader epoch, partition epoch, replicas, ISR), the high
// watermark and last stable offset, the leader's view of its followers,
// the idempotent and transactional producer state, and the wake-ups of
// waiters (long-polling fetches, acks=all produces).
//
// # The caller's duties
//
// The broker (the handlers above this package) decides nothing about
// replication itself; it
//
//   - applies every role the quorum commits with SetRole, in commit order;
//   - validates and prepares produced batches (topic rules, compression)
//     before Append, and passes a VerifyTxn callback for transactional
//     produces (KIP-890);
//   - proposes the ISR changes FollowerFetched and LaggingISR return, one at
//     a time per partition, and reports each outcome with ISRChangeDone;
//   - as a follower, fetches from the leader, calls TakeTruncation before
//     each fetch (then TruncateTo the divergence point it finds with
//     OffsetForLeaderEpoch), and AppendReplica with what it fetched;
//   - waits for acks=all with AwaitReplicated under a context with the
//     request's deadline;
//   - calls Checkpoint, Clean, ApplyRetention and RollAndFlush from its
//     housekeeping goroutine (one at a time per replica), and Close or
//     Remove at the end.
//
// Reads go through Log (a read-only view of storage.Log, which
// synchronises itself); every change goes through the Replica.
//
// # Locks
//
// Two mutexes and the waiter list, taken in this order and never held
// across an fsync, a wait, a quorum proposal or a call out of the package:
//
//   - mu serialises appends (leader and follower), markers, truncation and
//     role changes with the producer table, so a sequence or transaction
//     check and its append are one step. The log write itself (write(2)
//     into the page cache) happens under mu; an fsync that the flush policy
//     makes due is deferred (storage.AppendOptions.DeferFlush) and runs
//     after mu is released. VerifyTxn is called with mu released, and so
//     is a follower's truncation (rewrite: appends are refused while the
//     log is cut, and the producer table is rebuilt before they resume).
//   - rep guards the replication bookkeeping: followers' progress, the
//     pending ISR change and its backoff, the truncation flag, the epoch
//     start. FollowerFetched takes it alone (fetches never wait for an
//     append); paths that also need a consistent log end take mu first.
//   - waitersMu guards the waiter list, taken last and alone.
//
// The leader epoch, role, high watermark, solo flag and first unstable
// offset are atomics written under the locks above and read lock-free, so
// fetches and metadata answers never wait behind an append.
//
// # Decisions
//
// The high watermark (the smallest log end offset in the ISR, counting a
// follower being added: Kafka's maximal ISR), when a follower is caught up,
// when it may join the ISR and when it has lagged out of it are pure
// functions in progress.go, table-tested; the Replica gathers their inputs
// under rep and applies the outcome.
//
// # Files
//
// Beside the log's own files (broker/storage/doc.go) the replica directory
// holds:
//
//   - partition.metadata: the text "topic_id: <base64url topic ID>\n",
//     written without an fsync when the directory is created and made
//     durable by the log's first flush of records. A directory whose ID
//     differs belongs to a deleted topic of the same name and is replaced;
//     so is one whose file is empty or cut short (a power loss before any
//     flush: nothing in it was durable).
//   - producer-state.json: the producer snapshot as of a log offset,
//     written atomically at every checkpoint: 4 bytes "SPS2", a big-endian
//     CRC-32C of the rest, then JSON {"next_offset": N, "producers": {id:
//     {epoch, batches: [{first_seq, last_seq, first_offset, last_offset}]
//     (the last five), last_update_ms, current_txn_first_offset}}}. A file
//     without the magic is the checksum-less JSON of earlier versions and is
//     still read. On open the table is the snapshot plus a replay of the
//     batches after next_offset; a snapshot that fails its checksum, does
//     not parse or lies outside the log is ignored (logged) and the table
//     is rebuilt from the log start.
package replica

// Package txn is Kafka's transaction coordinator (exactly-once, KIP-98) as
// a pure state machine: the state of every transactional id of one
// __transaction_state partition, the transitions of InitProducerId,
// AddPartitionsToTxn (including KIP-890 verification), AddOffsetsToTxn,
// EndTxn, transaction timeouts and transactional-id expiry, the views of
// DescribeTransactions and ListTransactions, and the __transaction_state
// record codec. It does no I/O and reads no clock: every call is given the
// current time, and everything the caller must do afterwards comes back as
// Effects.
//
// # The caller's duties, in order
//
//  1. Serialise calls on one Coordinator (it is not safe for concurrent
//     use); the broker holds one per __transaction_state partition it
//     leads, created with that partition's leader epoch as the coordinator
//     epoch, and one lock for it. Requests for ids of partitions it does
//     not lead get NOT_COORDINATOR from the broker, not from here.
//  2. Load: Replay every record of the partition in log order (DecodeRecord
//     gives them; skip ErrUnknownKey), then write the markers
//     PendingMarkers returns — transactions the previous coordinator had
//     decided but not finished. Answer COORDINATOR_LOAD_IN_PROGRESS until
//     then.
//  3. Pass the current time to every call.
//  4. Persist Effects.Records to the partition, in the order returned
//     (EncodeRecord gives Kafka's key and value bytes; acks=all). The
//     in-memory state already reflects them. If a write fails, the state is
//     ahead of the log: drop the Coordinator and load the partition again
//     before serving it (Kafka instead reverts a pending transition; see
//     below).
//  5. Only once those records are durable, send the call's answer.
//  6. For each of Effects.Markers, write a transaction marker (a control
//     batch: producer id, producer epoch, commit or abort, coordinator
//     epoch) to every partition listed, as WriteTxnMarkers does, retrying
//     until each is durable or the partition is gone; then call
//     CompleteTxn with that Markers value and persist its records. The
//     EndTxn answer does not wait for the markers.
//  7. Call Tick at or soon after NextDeadline: it aborts transactions past
//     their transaction.timeout.ms (bumping the epoch, with markers) and
//     removes ids idle past transactional.id.expiration.ms (tombstones).
//     Tick's effects follow duties 4 and 6.
//
// # Behaviour (Kafka's TransactionCoordinator and TransactionMetadata)
//
//   - States and codes: Empty 0, Ongoing 1, PrepareCommit 2, PrepareAbort
//     3, CompleteCommit 4, CompleteAbort 5, Dead 6, PrepareEpochFence 7.
//     Empty → Ongoing (first partition added; start time recorded) →
//     PrepareCommit|PrepareAbort (EndTxn, timeout, fencing) →
//     CompleteCommit|CompleteAbort (markers durable) → Ongoing (next
//     transaction) or Empty (InitProducerId). Dead and PrepareEpochFence
//     are never held: an expired id is simply removed, and a fence goes
//     straight to PrepareAbort under the bumped epoch.
//   - InitProducerId: a new id gets a fresh producer id with epoch 0; an
//     existing one gets its epoch bumped, which fences the previous
//     producer. At an exhausted epoch (32766 and up) a new producer id is
//     issued with epoch 0. With an Ongoing transaction the epoch is bumped,
//     the transaction aborted and the answer is CONCURRENT_TRANSACTIONS;
//     the producer's retry bumps again. PrepareCommit/PrepareAbort:
//     CONCURRENT_TRANSACTIONS. A timeout ≤ 0 or above
//     transaction.max.timeout.ms: INVALID_TRANSACTION_TIMEOUT.
//   - KIP-360 (v3+): a producer that names its producer id and epoch is
//     bumped only if they are the current ones (or the id has never been
//     used); the previous epoch is answered again with the current one (a
//     lost answer); the previous id with an exhausted epoch is a retry of
//     a rotation. Anything else is PRODUCER_FENCED.
//   - AddPartitionsToTxn, AddOffsetsToTxn, EndTxn: an unknown id or another
//     producer id is INVALID_PRODUCER_ID_MAPPING; another epoch is
//     PRODUCER_FENCED (INVALID_PRODUCER_EPOCH for InitProducerId below v4
//     and the others below v2, which predate KIP-588). Adding during
//     PrepareCommit/PrepareAbort is CONCURRENT_TRANSACTIONS. A verify-only
//     add (v4+, KIP-890) changes nothing and answers TRANSACTION_ABORTABLE
//     for each partition not in the transaction.
//   - EndTxn retries: a commit (abort) when CompleteCommit (CompleteAbort)
//     succeeds, when PrepareCommit (PrepareAbort) gets
//     CONCURRENT_TRANSACTIONS; the other decision, or any EndTxn in Empty,
//     is INVALID_TXN_STATE.
//   - A transaction is timed out when start + timeout < now.
//
// Kafka's pendingState guards the time a transition's record is in
// flight; here state changes when its record is returned (as
// broker/groups does), so there is no such window. The Snapshot's
// PendingState names the Complete state a Prepare state is waiting for.
//
// Not implemented: transaction version 2 (KIP-890 part 2: the epoch bump
// on every EndTxn, EndTxn v5 answers with the new epoch, the v1 value's
// tagged producer-id fields), KIP-939 two-phase commit, and
// TxnOffsetCommit, which belongs to the group coordinator.
//
// # Records (Kafka's __transaction_state layout)
//
// Every integer is big-endian; value version 0 uses int16-length strings
// and int32-count arrays, version 1 is flexible (uvarint lengths plus
// tagged fields).
//
//	key (version 0)                       value (version 0 | 1)
//	  int16  version = 0                    int16  version
//	  string transactional id               int64  producer id
//	                                        int16  producer epoch
//	                                        int32  transaction timeout (ms)
//	                                        int8   state (codes above)
//	                                        array  partitions (null for Empty):
//	                                                 string topic
//	                                                 array int32 partition ids
//	                                        int64  last update timestamp (ms)
//	                                        int64  start timestamp (ms; -1)
//	                                        (v1) tagged fields: 0 previous
//	                                        producer id, 1 next producer id,
//	                                        2 client transaction version,
//	                                        3 next producer epoch
//
// A null value is a tombstone: the transactional id has expired. The
// coordinator writes value version Config.LogValueVersion (0 by default,
// as Kafka does until transaction.version 1 is enabled) and reads both.
package txn

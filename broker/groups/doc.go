// Package groups is Kafka's consumer-group coordinator as a pure state
// machine: the classic protocol (JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup) with its generations, protocol selection, timeouts and static
// membership; the next-generation consumer protocol (KIP-848,
// ConsumerGroupHeartbeat: server-side assignors in assignor.go, epochs and
// reconciliation in consumer_group.go); and the group's committed offsets,
// transactional ones included (txn_offsets.go). It does no I/O and
// reads no clock: every call is given the current time, and everything the
// caller must do afterwards comes back as Effects.
//
// # The caller's duties, in order
//
//  1. Serialise calls on one Group (it is not safe for concurrent use); the
//     broker holds one lock per __consumer_offsets partition.
//  2. Pass the current time to every call. Timeouts (session, rebalance,
//     group.initial.rebalance.delay.ms, pending members, pending syncs) fire
//     inside any call whose time has reached them, and in Tick. Call Tick at
//     or soon after NextDeadline.
//  3. Persist Effects.Records, in the order they were returned across all
//     groups of one partition, to the group's __consumer_offsets partition
//     (EncodeRecord gives Kafka's key and value bytes). The in-memory state
//     already reflects them: replaying the log in order rebuilds the same
//     state, which is what Replay (and the Replay* functions) do.
//  4. Only once those records are durable, deliver Effects.Replies: each
//     carries the Caller a JoinGroup or SyncGroup request registered, and
//     its result. A blocked JoinGroup or SyncGroup is answered exactly once.
//  5. Transactional offsets (TxnOffsetCommit, KIP-98/KIP-447). Create the
//     group if it is missing, as for OffsetCommit, and call TxnCommit once
//     the transaction coordinator has the group in the transaction
//     (AddOffsetsToTxn). Append its Effects.Records as in 3, then its
//     transactional records as one transactional batch of the request's
//     producer id and epoch, through the same ordered queue: the group
//     orders plain and transactional commits by the order of their
//     records, which must be the log's. Answer once the batch is durable.
//     A batch the log refuses (a fenced producer epoch) is a failed
//     append like any other: memory is ahead of the log, reload the
//     partition. When a transaction marker (WriteTxnMarkers) for producer
//     P is durable in the partition, call CompleteTxnOffsets(now, P,
//     commit) on each of its groups with HasPendingTxnOffsetsFrom(P), and
//     persist the effects. Answer OffsetFetch with FetchOffsets, which
//     gives UNSTABLE_OFFSET_COMMIT for require_stable (KIP-447).
//  6. Load a partition by reading every batch, open and aborted
//     transactions included (not read_committed): offset records of a
//     transactional batch go to ReplayTxnOffset with the batch's producer
//     id, a control batch's marker to ReplayTxnMarker on every group of
//     the partition (a no-op where the producer has none), and every other
//     record to Replay. A group may appear only through transactional
//     records.
//  7. Drop a group whose State is Dead; it has been deleted or expired.
//     Groups that are IsPristine may be dropped too (offsets pending in a
//     transaction count as offsets).
//
// # Behaviour (Kafka's classic GroupCoordinator)
//
//   - States: Empty → PreparingRebalance → CompletingRebalance → Stable,
//     and Dead for a deleted group. A rebalance completes when every known
//     member has rejoined (and no MEMBER_ID_REQUIRED member is pending) or at
//     the rebalance timeout (the largest of the members'), which removes the
//     dynamic members that did not rejoin. The first rebalance of an Empty
//     group waits group.initial.rebalance.delay.ms, extended while new
//     members keep arriving, up to the rebalance timeout.
//   - The protocol is the one every member supports, chosen by votes: each
//     member votes for the first of its own protocols that all support.
//     Protocol metadata and assignments are opaque bytes passed through.
//   - The first member to join leads; a leader that does not rejoin is
//     replaced by one that did. Only the leader's JoinGroup response lists
//     the members; only the leader's SyncGroup assignment is used.
//   - JoinGroup v4+ with an empty member id gets MEMBER_ID_REQUIRED and a
//     new id (KIP-394); the member is pending until it rejoins with it or
//     its session timeout passes.
//   - Static members (group.instance.id, KIP-345): a rejoin with a new
//     member id replaces the old one, which is fenced (FENCED_INSTANCE_ID).
//     In Stable, when the selected protocol would not change, the group is
//     not rebalanced: the new id inherits the assignment, and a v9 leader is
//     told to skip assignment (KIP-814). Static members that do not rejoin
//     in time are kept until their session expires.
//   - A member's session expires session.timeout after its last heartbeat,
//     except while it waits in JoinGroup (bounded by the rebalance) or in
//     SyncGroup (bounded by the pending-sync timeout, the rebalance timeout
//     after the join completed). A new member waiting for its first
//     generation is dropped after NewMemberJoinTimeout (5 minutes).
//   - Stale requests: ILLEGAL_GENERATION for another generation,
//     UNKNOWN_MEMBER_ID for an unknown member, REBALANCE_IN_PROGRESS for a
//     heartbeat or sync during a rebalance, FENCED_INSTANCE_ID for a static
//     member's replaced id.
//   - Offsets: commits with generation -1 and no member are accepted only
//     while the group is Empty (simple consumers and admin tools); member
//     commits are fenced by member and generation, and refused with
//     REBALANCE_IN_PROGRESS while the group awaits its assignment. Offsets
//     expire (offsets.retention.minutes) only for Empty groups — counted from
//     when the group became Empty — for groups without a protocol type, and,
//     for Stable consumer groups, for topics no member subscribes to
//     (KIP-211, KIP-496).
//   - Transactional offsets (txn_offsets.go) are pending for their
//     producer id until its marker: OffsetFetch does not see them, and
//     with require_stable reports UNSTABLE_OFFSET_COMMIT for their
//     partitions. A commit marker makes them committed unless a later
//     record (a plain OffsetCommit made during the transaction, or another
//     transaction's) already set the partition; an abort drops them. A
//     partition with pending offsets does not expire, and a group with any
//     is not deleted by expiry; tombstones (OffsetDelete, DeleteGroups,
//     deleted topics) remove them.
//
// # Consumer (KIP-848) groups
//
// A group is classic or consumer, never both: ConsumerHeartbeat turns an
// empty classic group (no members; offsets kept) into a consumer group and
// refuses one with members (GROUP_ID_NOT_FOUND, as Kafka); a classic
// JoinGroup turns an empty consumer group back into a classic one and gets
// INCONSISTENT_GROUP_PROTOCOL while it has members. Kafka's online upgrade
// of a live classic group (and downgrade of a live consumer group) is not
// implemented. ConsumerHeartbeat takes the cluster's topics (TopicCatalog)
// as input. A consumer group's state is persisted in Strata's own records
// (below; Kafka's records 3–16 are not written): after every call the
// group compares its state with the values it last wrote and emits the
// group record and the member records that changed, a member tombstone for
// each member gone, and tombstones for all of them once the group is
// deleted, turns classic, or holds nothing (no members, no offsets).
// Replaying them (Replay) rebuilds the same state — members keep their ids,
// epochs and assignments, so they carry on after a coordinator restart —
// with every session (and pending revocation) restarting from the load, as
// Kafka does after a failover. Its timers (sessions, revocation within the
// rebalance timeout) fire through Tick and NextDeadline like the classic
// ones. See consumer_group.go for the rules.
//
// # Records (Kafka's __consumer_offsets layout)
//
// Keys and values are Kafka's own, so Kafka tools read them; every integer
// is big-endian, strings are int16-length-prefixed (values v4+ are flexible).
//
//	offset commit key (version 1)         group metadata key (version 2)
//	  int16  version = 1                    int16  version = 2
//	  string group                          string group
//	  string topic
//	  int32  partition
//
//	offset commit value (version 3; version 1 when the commit has an
//	expire timestamp, from OffsetCommit v1–v4)
//	  int16  version
//	  int64  offset
//	  int32  leader epoch                   (v3)
//	  string metadata
//	  int64  commit timestamp (ms)
//	  int64  expire timestamp (ms)          (v1 only)
//
//	group metadata value (version 3)
//	  int16  version = 3
//	  string protocol type
//	  int32  generation
//	  string protocol (nullable)
//	  string leader (nullable)
//	  int64  current state timestamp (ms)
//	  array  members: member id, instance id (nullable), client id,
//	         client host, rebalance timeout, session timeout,
//	         subscription (bytes), assignment (bytes)
//
// A null value is a tombstone: for an offset key the commit is deleted, for
// a group key the group's membership state is (its offsets stay until their
// own tombstones).
//
// # Consumer (KIP-848) group records (Strata's own, consumer_records.go)
//
// Under key versions Kafka does not use, so Kafka tools skip them (and
// Strata skips Kafka's 3–16). Same integer and string encoding; "nstring"
// is a string whose length -1 means null; arrays have an int32 count.
// Values start with their own version, 0; a reader fails on a newer one.
//
//	consumer group key (0x7F00)           consumer member key (0x7F01)
//	  int16  version = 0x7F00               int16  version = 0x7F01
//	  string group                          string group
//	                                        string member id
//
//	consumer group value (version 0)
//	  int16  version = 0
//	  int32  group epoch
//	  int32  assignment epoch               (of the target assignment)
//	  string assignor                       ("" : the configured default)
//	  int64  state timestamp (ms; -1 unknown)
//	  array  subscribed topics: string topic, int32 partitions
//	         (the metadata the target was computed from; sorted by topic)
//
//	consumer member value (version 0)
//	  int16  version = 0
//	  nstring instance id
//	  nstring rack id
//	  string client id
//	  string client host
//	  int32  rebalance timeout (ms)
//	  array  subscribed topic names: string
//	  string subscribed topic regex         ("" for none)
//	  string server assignor                ("" for none)
//	  int32  member epoch
//	  int32  previous member epoch
//	  int8   state: 0 stable, 1 unrevoked, 2 unreleased
//	  partitions assigned                   (each of these three: array of
//	  partitions pending revocation          topics, each string topic and
//	  target partitions (at the group's      array int32 partitions; sorted)
//	    assignment epoch)
//
// A null value is a tombstone for the group's record or that member's.
// Records of one group may come back in any order after compaction: each
// makes the group a consumer group if it is not one yet.
package groups

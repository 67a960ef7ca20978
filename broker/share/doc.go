// Package share is the pure core of share groups (KIP-932, "queues for
// Kafka"): many members read the same partitions, each record is
// acquired by one member at a time, acknowledged (accept, release,
// reject) or redelivered once its acquisition lock ends.
//
// Three state machines, none of which does I/O or reads the clock (time
// comes in as arguments; the broker serializes calls):
//
//   - Partition: one share-partition (a group on one topic partition).
//     Offsets below Start are done; [Start, End) hold a state each:
//
//     Start                                            End
//     |  acked | acquired(m1,dc=1) | available(dc=1) | archived | ...
//     +--------+-------------------+-----------------+----------+
//
//     Acquire takes available records of the batches a fetch read (whole
//     batches, up to max records, within MaxInFlight records of Start),
//     locking them for LockDuration and counting a delivery. Acknowledge
//     applies ACCEPT (acknowledged), RELEASE (available again), REJECT
//     and GAP (archived), RENEW (lock extended), all or nothing: a record
//     not acquired by the member is INVALID_RECORD_STATE, a malformed
//     batch INVALID_REQUEST. Expire ends locks; a record that comes back
//     after DeliveryLimit deliveries is archived. Start moves past the
//     leading acknowledged/archived records. Snapshot/Restore give the
//     durable form (acquired records are persisted as available).
//
//   - Group: membership by ShareGroupHeartbeat (join with epoch 0, leave
//     with -1, FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID otherwise); every
//     member is assigned every partition of the topics it subscribes to.
//
//   - Sessions: a node's share fetch sessions (epoch 0 opens, -1 closes,
//     SHARE_SESSION_NOT_FOUND and INVALID_SHARE_SESSION_EPOCH otherwise).
package share

// Package cluster is the metadata state machine of Strata's controller
// quorum: the State every controller and broker holds, the Records the raft
// log carries, Apply (state + record → state) and the controller's
// decisions (PlanAssignment, PlanFencing, PlanElections,
// PlanPreferredElections) as pure functions that return records to propose.
//
// Besides registration, fencing and topics, the log carries a broker's
// controlled shutdown (ControlledShutdown: the broker hands its ISR places
// and leaderships to eligible replicas before it exits) and partition
// reassignments (ReassignPartition, KIP-455: the target replicas are added,
// and once all of them are in the ISR, Apply itself completes the move).
//
// It also holds the cluster's finalized features (KIP-584): UpdateFeatures
// sets levels of metadata.version, group.version, transaction.version and
// kraft.version, all or none, within the levels this package knows
// (KnownFeatures). Until the first one applies, a state has
// DefaultFeatureLevels (metadata.version 25 = Kafka 4.0-IV3, group.version
// 1), so clusters older than feature records need no migration.
// State.FeaturesEpoch counts the UpdateFeatures records that changed a
// level; brokers report it as ApiVersions' FinalizedFeaturesEpoch.
//
// Nothing here does I/O or reads a clock: time arrives inside records
// (RegisterBroker.TimeMs, BrokerHeartbeat.TimeMs) or as an argument
// (PlanFencing's nowMs), so replaying a log always yields the same State.
// A test keeps it that way (purity_test.go).
//
// # Records on the wire
//
// A record is one type byte followed by the record's JSON body:
//
//	+--------+--------------------------------------+
//	| type   | JSON object of the record's fields   |
//	| 1 byte | (UTF-8, no trailing newline)         |
//	+--------+--------------------------------------+
//
// DecodeRecord rejects an unknown type, malformed JSON, unknown fields and
// records that fail Validate; it never panics (FuzzDecodeRecord).
//
// # States are values
//
// Apply never modifies the State it is given: it copies the maps and slices
// it changes and shares the rest, so a State handed to readers stays valid
// forever and costs nothing to publish. Readers must not modify a State.
//
// # Rejections
//
// A record that is not valid against the state (a topic that already
// exists, an AlterPartition with a stale partition epoch, a heartbeat from
// an old incarnation) leaves the state unchanged and Apply returns an error
// wrapping ErrRejected and a specific sentinel. Every replica rejects the
// same records, so rejected records in the log are harmless.
package cluster

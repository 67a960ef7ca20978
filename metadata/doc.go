// Package metadata owns cluster metadata: which brokers exist, which topics
// exist with their topic IDs, partition assignments, leaders, epochs, ISRs
// and configs, the cluster ID and the allocation of idempotent producer IDs.
//
// The broker runs on the controller quorum below (a one-voter quorum in
// single-node mode): it proposes cluster records through a Member (a Node
// on a controller, an Observer on a broker-only node) and acts on the
// records it has applied, in log order. FileStore reads the one JSON
// document a data directory written before the quorum kept, once, so the
// broker can migrate it; nothing writes that document any more.
//
// # The controller quorum
//
// Controllers replicate a log of metadata records with etcd raft
// (go.etcd.io/raft/v3, driven as a RawNode). The pieces:
//
//   - metadata/cluster: the state machine, pure. State, the Records,
//     Apply(state, record) → state, and the controller's decisions
//     (PlanAssignment, PlanFencing, PlanElections) as functions returning
//     records. No I/O, no clock.
//   - metadata/wal: the durable raft log (CRC-framed segments, fsync before
//     acknowledging, snapshot files, compaction, torn-tail recovery).
//   - Node (this package): one controller. Its loop owns the RawNode and, for
//     each Ready, persists snapshot, entries and hard state to the WAL, sends
//     messages through a Transport, applies committed records, publishes the
//     new State and calls Advance. Every SnapshotEvery applied entries it
//     snapshots the State and compacts the log.
//   - Transport: TCPTransport (length-prefixed raftpb.Message frames over one
//     persistent connection per peer, redial with backoff) and MemNetwork;
//     both honour Faults (cut links, one way or both) for tests.
//   - The controller loop: on the leader only, every ControllerInterval,
//     ControllerStep proposes the cluster id (once), fencing by the injected
//     Clock and broker.session.timeout.ms, and leader elections.
//   - metadata/metadatatest: the in-process cluster harness.
//
// # Caller's view of a Node
//
//  1. StartNode(cfg): replays snapshot and WAL, joins the quorum given by
//     cfg.Voters (none: a one-voter quorum of cfg.NodeID, same code path,
//     which elects itself at once).
//  2. Propose(ctx, record) from any node: a follower forwards to the leader
//     (raft proposal forwarding over the transport). It returns when the
//     record is committed and applied locally, with its rejection if the
//     state machine refused it, or *NotLeaderError when no leader was known
//     before ctx ended. On a ctx timeout the outcome is unknown.
//  3. State() is the latest applied state (immutable, free to read);
//     WaitApplied(ctx, index) waits for an index; Subscribe(fn) delivers
//     every applied record in log order (Before and After states), so a
//     broker acts only on metadata it has applied.
//  4. Close stops the loops, subscriptions and transport and closes the WAL.
//
// # Observers (broker-only nodes)
//
// A node with --roles broker is no voter: an Observer follows the metadata
// log from one controller at a time over the observer protocol, served on
// the controllers' raft listener (a connection opening with the magic
// "SOB1", which no raft frame length can equal; see observerMagic). The
// controller sends a snapshot of its applied state when the observer is
// older than its ring of recent records (Config.ObserverRing, 4096), then
// every record it applies, with the raft leader id and a beat every
// 500 ms. The observer applies them with cluster.Apply into its own State,
// so it holds exactly the controllers' state, and resumes from its index
// on another controller when its connection fails, goes silent, or its
// controller loses the leader. Its Propose goes through the connected
// controller's Propose (errors.Is works for the cluster sentinels) and
// returns once the observer has applied the record. Node and Observer both
// implement Member; OpenNode and OpenObserver start one and wait for the
// cluster id. Observers keep nothing on disk.
//
// Raft ids are Kafka node ids plus one (raft reserves 0). Membership is
// static: the voters come from configuration on every start.
//
// metadata never imports broker.
package metadata

package metadata

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Clock is the controller's time source; tests inject a fake one.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Config configures a Node. Zero values take the defaults named.
type Config struct {
	// NodeID is this node's id (--node-id).
	NodeID int32
	// Voters is the quorum (--controllers). Empty: a one-voter quorum of
	// NodeID, through the same code path.
	Voters []Voter
	// Join starts a controller that is not a voter yet (--controller-join):
	// Voters names the current voters (this node may be among them or
	// not); with no membership in its log the node starts with no raft
	// configuration, never campaigns, and waits for the leader, which
	// adds it as a learner, catches it up and promotes it (AddVoter).
	Join bool
	// Dir holds the raft log and snapshots.
	Dir string
	// Transport carries raft messages. Nil: TCP on ListenAddr (or this
	// node's voter address) when there are other voters, nothing otherwise.
	Transport Transport
	// ListenAddr is --controller-listen.
	ListenAddr string
	// TLS, if set, secures the raft port with mutual TLS (the TCP
	// transport's peers and observers).
	TLS *TLS

	// TickInterval is one raft tick (100 ms); ElectionTick (10) and
	// HeartbeatTick (1) count ticks.
	TickInterval  time.Duration
	ElectionTick  int
	HeartbeatTick int

	// SnapshotEvery applied entries a snapshot is taken and the log
	// compacted (1000); CatchUpEntries stay in the log below the snapshot
	// for slow followers (100).
	SnapshotEvery  uint64
	CatchUpEntries uint64
	// SegmentBytes is the WAL segment size (4 MiB).
	SegmentBytes int64

	// Controller loop: run every ControllerInterval (500 ms) on the leader;
	// brokers whose last heartbeat is older than SessionTimeout
	// (broker.session.timeout.ms, 9 s) by Clock (real time) are fenced.
	ControllerInterval time.Duration
	SessionTimeout     time.Duration
	Clock              Clock
	// DisableController turns the loop off (tests drive ControllerStep).
	DisableController bool

	// Automatic preferred-leader rebalance (auto.leader.rebalance.enable,
	// on by default): at most once per LeaderImbalanceCheckInterval (5 s by
	// Clock; Kafka's leader.imbalance.check.interval.seconds defaults to
	// 300 s, Strata hands leaderships back to a returning broker sooner on
	// purpose) the controller elects the first replica of every partition
	// it does not lead while that replica is eligible and in the ISR.
	// DisableAutoLeaderRebalance turns it off (the zero Config has it on).
	DisableAutoLeaderRebalance   bool
	LeaderImbalanceCheckInterval time.Duration
	// ClusterID is what the first leader proposes (random when empty).
	ClusterID string

	// ObserverRing is how many recent applied records the node keeps (at
	// least; up to twice as many) to catch observers up record by record;
	// an observer further behind gets a snapshot first (4096).
	ObserverRing int

	// ProposeTimeout bounds the controller's own proposals (5 s).
	ProposeTimeout time.Duration
	Logger         *slog.Logger

	// run is the controller's own bookkeeping, set by setDefaults.
	run *controllerRun
}

// DefaultLeaderImbalanceCheckInterval is Config.LeaderImbalanceCheckInterval's default.
const DefaultLeaderImbalanceCheckInterval = 5 * time.Second

// AutoLeaderRebalance reports whether the controller runs the automatic
// preferred-leader rebalance (auto.leader.rebalance.enable).
func (c *Config) AutoLeaderRebalance() bool { return !c.DisableAutoLeaderRebalance }

func (c *Config) setDefaults() {
	if c.TickInterval <= 0 {
		c.TickInterval = 100 * time.Millisecond
	}
	if c.ElectionTick <= 0 {
		c.ElectionTick = 10
	}
	if c.HeartbeatTick <= 0 {
		c.HeartbeatTick = 1
	}
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = 1000
	}
	if c.CatchUpEntries == 0 {
		c.CatchUpEntries = 100
	}
	if c.ControllerInterval <= 0 {
		c.ControllerInterval = 500 * time.Millisecond
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 9 * time.Second
	}
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.LeaderImbalanceCheckInterval <= 0 {
		c.LeaderImbalanceCheckInterval = DefaultLeaderImbalanceCheckInterval
	}
	// Each node gets its own controller-run state, even from a shared Config.
	c.run = &controllerRun{}
	if c.ObserverRing <= 0 {
		c.ObserverRing = 4096
	}
	if c.ProposeTimeout <= 0 {
		c.ProposeTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if len(c.Voters) == 0 {
		c.Voters = []Voter{{ID: c.NodeID, Addr: c.ListenAddr}}
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.NodeID < 0 {
		return fmt.Errorf("metadata: node id %d", c.NodeID)
	}
	if c.Dir == "" {
		return errors.New("metadata: no data directory")
	}
	if c.Join && len(c.Voters) == 0 {
		return errors.New("metadata: joining the quorum needs the current voters")
	}
	if !c.Join && len(c.Voters) > 0 && !slices.ContainsFunc(c.Voters, func(v Voter) bool { return v.ID == c.NodeID }) {
		return fmt.Errorf("metadata: node %d is not among the controllers %v", c.NodeID, c.Voters)
	}
	if c.ElectionTick != 0 && c.HeartbeatTick != 0 && c.ElectionTick <= c.HeartbeatTick {
		return errors.New("metadata: election tick must exceed heartbeat tick")
	}
	return nil
}

package metadata

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
	"github.com/strata-streaming/strata/metadata/wal"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Errors of Node.
var (
	ErrNotLeader = errors.New("metadata: not the controller leader")
	ErrClosed    = errors.New("metadata: node closed")
)

// NotLeaderError is returned by Propose when no leader is known to forward
// to. Leader is the leader's node id hint, -1 when unknown.
type NotLeaderError struct{ Leader int32 }

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("%v (leader hint %d)", ErrNotLeader, e.Leader)
}

// Unwrap makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }

// Applied describes one applied record: the state before and after it.
// A snapshot installed from the leader arrives as Snapshot=true with no
// Record: subscribers must resynchronise from After.
type Applied struct {
	Index    uint64
	Record   cluster.Record
	Before   cluster.State
	After    cluster.State
	Snapshot bool
}

type appliedView struct {
	index uint64
	state cluster.State
}

type proposal struct {
	data  []byte
	reply chan error // gets ErrNotLeader etc. if raft refuses it
}

type proposeResult struct {
	applied Applied
	err     error
}

// Node is one controller: a raft member that persists its log in a WAL,
// applies committed records to the metadata state machine and, while it is
// the leader, runs the controller loop. Close stops everything it started.
type Node struct {
	cfg       Config
	id        uint64
	confState *raftpb.ConfState
	storage   *raft.MemoryStorage
	log       *wal.WAL
	rn        *raft.RawNode
	transport Transport
	// hub serves observers; nil unless the transport is TCP.
	hub *observerHub

	recvc chan *raftpb.Message
	propc chan proposal
	stopc chan struct{}
	// statusc asks the raft loop for raft.Status (QuorumStatus).
	statusc chan chan raft.Status
	// confc takes membership changes to the raft loop (membership.go).
	confc chan confRequest
	// deadLeaderc carries LeaderUnreachable reports to the raft loop.
	deadLeaderc chan deadLeader
	// obs are the observers this node streams to (quorum_status.go).
	obs    observers
	failed chan struct{} // closed when the loop stops on an error
	// becameLeader wakes the controller loop when this node wins an election.
	becameLeader chan struct{}
	wg           sync.WaitGroup

	// Loop-owned.
	state         cluster.State
	appliedIndex  uint64
	snapshotIndex uint64

	view     atomic.Pointer[appliedView]
	leader   atomic.Int64 // raft id of the leader, 0 when unknown
	isLeader atomic.Bool
	term     atomic.Uint64 // the raft term of the latest hard state
	commit   atomic.Uint64 // the commit index of the latest hard state
	nextID   atomic.Uint64
	// snapshotsInstalled counts snapshots received from the leader.
	snapshotsInstalled atomic.Uint64
	// heard is when (controller clock, ms) a raft message last arrived
	// from each other voter: a live process, whatever its heartbeat
	// records' commit latency (see controllerRun.fencingView).
	// Keys are node ids, values *atomic.Int64; any member may appear.
	heard sync.Map

	mu struct {
		sync.Mutex
		appliedCh chan struct{} // closed and replaced on each apply
		waiters   map[uint64]chan proposeResult
		subs      map[*subscriber]struct{}
		err       error
		closed    bool
	}
}

// quietRaftLogger drops raft's chatter and keeps its panics.
var quietRaftLogger = &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}

// StartNode opens (or creates) the node's log in cfg.Dir, replays it and
// starts the raft loop, the transport and the controller loop.
func StartNode(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	n := &Node{
		cfg:         cfg,
		id:          raftID(cfg.NodeID),
		recvc:       make(chan *raftpb.Message, 4096),
		propc:       make(chan proposal, 256),
		stopc:       make(chan struct{}),
		failed:      make(chan struct{}),
		statusc:     make(chan chan raft.Status),
		confc:       make(chan confRequest),
		deadLeaderc: make(chan deadLeader, 1),

		becameLeader: make(chan struct{}, 1),
	}
	n.mu.appliedCh = make(chan struct{})
	n.mu.waiters = map[uint64]chan proposeResult{}
	n.mu.subs = map[*subscriber]struct{}{}
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	n.nextID.Store(binary.BigEndian.Uint64(seed[:]))

	voters := make([]uint64, len(cfg.Voters))
	for i, v := range cfg.Voters {
		voters[i] = raftID(v.ID)
	}
	slices.Sort(voters)

	w, loaded, err := wal.Open(filepath.Join(cfg.Dir, "raft"), wal.Options{SegmentBytes: cfg.SegmentBytes})
	if err != nil {
		return nil, fmt.Errorf("metadata: open raft log: %w", err)
	}
	n.log = w
	n.storage = raft.NewMemoryStorage()
	snap := proto.Clone(loaded.Snapshot).(*raftpb.Snapshot)
	if snap.Metadata == nil {
		snap.Metadata = &raftpb.SnapshotMetadata{}
	}
	if n.state, err = cluster.DecodeState(snap.GetData()); err != nil {
		w.Close()
		return nil, fmt.Errorf("metadata: snapshot %d: %w", snap.GetMetadata().GetIndex(), err)
	}
	switch {
	case len(n.state.Controllers) > 0 && len(snap.GetMetadata().GetConfState().GetVoters()) > 0:
		// The membership changed at run time: every applied conf change
		// is followed by a snapshot, so this one holds the membership as
		// of its index and the log after it the later changes.
	case cfg.Join:
		// Not a voter yet: no configuration until the leader's snapshot
		// brings one (AddVoter adds this node as a learner first).
		snap.Metadata.ConfState = &raftpb.ConfState{AutoLeave: proto.Bool(false)}
	default:
		// The static voters (--controllers): the snapshot's conf state
		// carries them, so raft starts with them without conf-change
		// entries.
		snap.Metadata.ConfState = &raftpb.ConfState{Voters: voters, AutoLeave: proto.Bool(false)}
	}
	n.confState = snap.Metadata.ConfState
	if err := n.storage.ApplySnapshot(snap); err != nil {
		w.Close()
		return nil, fmt.Errorf("metadata: load snapshot: %w", err)
	}
	n.appliedIndex = snap.GetMetadata().GetIndex()
	n.snapshotIndex = n.appliedIndex
	if err := n.storage.Append(loaded.Entries); err != nil {
		w.Close()
		return nil, fmt.Errorf("metadata: load entries: %w", err)
	}
	if loaded.HardState != nil {
		n.term.Store(loaded.HardState.GetTerm())
		if err := n.storage.SetHardState(loaded.HardState); err != nil {
			w.Close()
			return nil, err
		}
	}
	n.view.Store(&appliedView{index: n.appliedIndex, state: n.state})

	rn, err := raft.NewRawNode(&raft.Config{
		ID:              n.id,
		ElectionTick:    cfg.ElectionTick,
		HeartbeatTick:   cfg.HeartbeatTick,
		Storage:         n.storage,
		Applied:         n.appliedIndex,
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		CheckQuorum:     true,
		PreVote:         true,
		// A leader that removes itself hands over (RemoveVoter).
		StepDownOnRemoval: true,
		Logger:            quietRaftLogger,
	})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("metadata: raft: %w", err)
	}
	n.rn = rn

	n.transport = cfg.Transport
	if n.transport == nil {
		n.transport = nopTransport{}
		listen := cfg.ListenAddr
		for _, v := range cfg.Voters {
			if v.ID == cfg.NodeID && listen == "" {
				listen = v.Addr
			}
		}
		// A lone voter with a raft address listens too: observers
		// (broker-only nodes) follow it there, and voters can be added.
		if len(cfg.Voters) > 1 || listen != "" || len(n.state.Controllers) > 0 {
			tr, err := NewTCPTransport(TCPConfig{NodeID: cfg.NodeID, Listen: listen, Peers: n.peers(), Logger: cfg.Logger, TLS: cfg.TLS})
			if err != nil {
				w.Close()
				return nil, err
			}
			n.transport = tr
		}
	}
	if tr, ok := n.transport.(*TCPTransport); ok {
		tr.SetPeers(n.peers())
		n.hub = n.startObserverHub()
		tr.setObserverHandler(n.serveObserver)
	}
	if err := n.transport.Start(n.deliver); err != nil {
		if n.hub != nil {
			n.hub.cancel()
			n.wg.Wait()
		}
		w.Close()
		return nil, err
	}
	if cs := n.confState.GetVoters(); len(cs) == 1 && cs[0] == n.id {
		// A one-voter quorum elects itself at once.
		_ = n.rn.Campaign()
	}
	n.wg.Add(1)
	go n.run()
	if !cfg.DisableController {
		n.wg.Add(1)
		go n.controllerLoop()
	}
	return n, nil
}

// deliver hands an inbound message to the loop; it never blocks.
func (n *Node) deliver(m *raftpb.Message) {
	from := nodeID(m.GetFrom())
	h, ok := n.heard.Load(from)
	if !ok {
		h, _ = n.heard.LoadOrStore(from, new(atomic.Int64))
	}
	h.(*atomic.Int64).Store(n.cfg.Clock.Now().UnixMilli())
	select {
	case n.recvc <- m:
	default: // overloaded: drop, raft retransmits
	}
}

// ID is this node's id.
func (n *Node) ID() int32 { return n.cfg.NodeID }

// lastHeard is when a raft message last arrived from voter id (ms on the
// controller clock), 0 if never or not a peer.
//
// This node itself counts as heard now: in a node that is controller and
// broker, the broker of the controller's own process is alive.
func (n *Node) lastHeard(id int32) int64 {
	if id == n.cfg.NodeID {
		return n.cfg.Clock.Now().UnixMilli()
	}
	if h, ok := n.heard.Load(id); ok {
		return h.(*atomic.Int64).Load()
	}
	return 0
}

// LeaderID is the current leader's node id, -1 when unknown.
func (n *Node) LeaderID() int32 { return nodeID(uint64(n.leader.Load())) }

// Term is the raft term this node is in (KIP-595's epoch), as of its
// latest persisted hard state.
func (n *Node) Term() uint64 { return n.term.Load() }

// CommitIndex is the quorum's commit index as this voter knows it (from
// the leader's messages): AppliedIndex catches up with it.
func (n *Node) CommitIndex() uint64 { return n.commit.Load() }

// IsLeader reports whether this node is the raft leader.
func (n *Node) IsLeader() bool { return n.isLeader.Load() }

// State returns the latest applied state. It is immutable and cheap.
func (n *Node) State() cluster.State { return n.view.Load().state }

// AppliedIndex returns the index of the last applied entry.
func (n *Node) AppliedIndex() uint64 { return n.view.Load().index }

// WaitApplied waits until the entry at index is applied locally.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		n.mu.Lock()
		ch, err := n.mu.appliedCh, n.mu.err
		n.mu.Unlock()
		if n.view.Load().index >= index {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("metadata: waiting for index %d: %w", index, ctx.Err())
		}
	}
}

// Propose commits rec through the quorum and returns once it is applied
// here. A follower forwards the proposal to the leader (raft's proposal
// forwarding over the transport); while no leader is known it retries
// until ctx ends and then returns a *NotLeaderError. A record the state
// machine rejects returns the rejection (errors.Is(err,
// cluster.ErrRejected)). If ctx ends first the outcome is unknown: the
// record may still commit.
func (n *Node) Propose(ctx context.Context, rec cluster.Record) (Applied, error) {
	body, err := cluster.EncodeRecord(rec)
	if err != nil {
		return Applied{}, err
	}
	if err := rec.Validate(); err != nil {
		return Applied{}, err
	}
	id := n.nextID.Add(1)
	data := make([]byte, 8, 8+len(body))
	binary.BigEndian.PutUint64(data, id)
	data = append(data, body...)

	done := make(chan proposeResult, 1)
	n.mu.Lock()
	if n.mu.err != nil {
		err := n.mu.err
		n.mu.Unlock()
		return Applied{}, err
	}
	n.mu.waiters[id] = done
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.mu.waiters, id)
		n.mu.Unlock()
	}()

	for {
		r := n.submit(ctx, data, done)
		var nl *NotLeaderError
		if !errors.As(r.err, &nl) {
			return r.applied, r.err
		}
		// No leader known (an election is under way): the proposal was
		// dropped before reaching any log, so retrying cannot duplicate it.
		select {
		case <-ctx.Done():
			return Applied{}, r.err
		case <-n.failed:
			return Applied{}, n.failure()
		case <-time.After(n.cfg.TickInterval / 2):
		}
	}
}

// submit hands one proposal to the loop and waits for its outcome.
func (n *Node) submit(ctx context.Context, data []byte, done chan proposeResult) proposeResult {
	reply := make(chan error, 1)
	select {
	case n.propc <- proposal{data: data, reply: reply}:
	case <-ctx.Done():
		return proposeResult{err: fmt.Errorf("metadata: propose: %w", ctx.Err())}
	case <-n.failed:
		return proposeResult{err: n.failure()}
	}
	for {
		select {
		case err := <-reply:
			if err != nil {
				return proposeResult{err: err}
			}
			reply = nil
		case r := <-done:
			return r
		case <-ctx.Done():
			return proposeResult{err: fmt.Errorf("metadata: proposal not applied: %w", ctx.Err())}
		case <-n.failed:
			return proposeResult{err: n.failure()}
		}
	}
}

func (n *Node) failure() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.err
}

// Close stops the node: the loops, the subscriptions and the transport,
// then closes the log. It does no clean-shutdown work (no final snapshot):
// everything acknowledged is already durable.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.mu.closed {
		n.mu.Unlock()
		return nil
	}
	n.mu.closed = true
	subs := n.mu.subs
	n.mu.subs = map[*subscriber]struct{}{}
	n.mu.Unlock()
	close(n.stopc)
	// Fail pending and future proposals first: a subscriber blocked in
	// Propose must return before Close waits for it.
	n.setFailure(ErrClosed)
	for s := range subs {
		close(s.stop)
	}
	terr := n.transport.Close()
	n.wg.Wait()
	werr := n.log.Close()
	return errors.Join(terr, werr)
}

// setFailure records why the node stopped and wakes everyone waiting.
func (n *Node) setFailure(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.mu.err != nil {
		return
	}
	n.mu.err = err
	close(n.failed)
	close(n.mu.appliedCh)
	n.mu.appliedCh = make(chan struct{})
}

func (n *Node) run() {
	defer n.wg.Done()
	ticker := time.NewTicker(n.cfg.TickInterval)
	defer ticker.Stop()
	for {
		for n.rn.HasReady() {
			if err := n.handleReady(n.rn.Ready()); err != nil {
				n.cfg.Logger.Error("metadata: controller stopped", "node", n.cfg.NodeID, "err", err)
				n.isLeader.Store(false)
				n.leader.Store(0)
				n.setFailure(fmt.Errorf("metadata: node %d stopped: %w", n.cfg.NodeID, err))
				return
			}
		}
		select {
		case <-n.stopc:
			return
		case <-ticker.C:
			n.rn.Tick()
		case m := <-n.recvc:
			// Errors here are messages from unknown peers or stale
			// local types: nothing to do but drop them.
			_ = n.rn.Step(m)
		case reply := <-n.statusc:
			reply <- n.rn.Status()
		case req := <-n.confc:
			req.reply <- n.proposeConfChange(req)
		case dead := <-n.deadLeaderc:
			n.campaignForDeadLeader(dead)
		case p := <-n.propc:
			n.propose(p)
			// Take the proposals already waiting too, so that one Ready
			// (one log fsync) carries them all: concurrent proposers
			// (the controller's elections) then cost a raft round per
			// batch, not per record.
			for range maxProposalsPerReady - 1 {
				select {
				case p := <-n.propc:
					n.propose(p)
					continue
				default:
				}
				break
			}
		}
	}
}

// LeaderUnreachable tells the node that the process of node dead is not
// running (a connection to it was refused). If dead is the raft leader,
// the other voters campaign at once instead of waiting out the election
// timeout, one after another so their votes do not split: the lowest id
// now, as in a leadership transfer (voters grant it although their leader
// lease has not run out), the next deadLeaderStagger later if there is
// still no leader (the first may have been refused for a shorter log),
// and so on. A no-op in every other case.
func (n *Node) LeaderUnreachable(dead int32) {
	select {
	case n.deadLeaderc <- deadLeader{node: dead}:
	default:
	}
}

// deadLeaderStagger separates the campaigns of LeaderUnreachable.
const deadLeaderStagger = 300 * time.Millisecond

// deadLeader is a LeaderUnreachable report; delayed once its turn came.
type deadLeader struct {
	node    int32
	delayed bool
}

// campaignForDeadLeader runs in the raft loop.
func (n *Node) campaignForDeadLeader(d deadLeader) {
	st := n.rn.Status()
	leaderGone := st.Lead == raftID(d.node)
	if st.RaftState == raft.StateLeader || !(leaderGone || (d.delayed && st.Lead == 0)) {
		return
	}
	voters := st.Config.Voters.IDs()
	if _, ok := voters[n.id]; !ok {
		return
	}
	rank := 0
	for v := range voters {
		if v != raftID(d.node) && v < n.id {
			rank++
		}
	}
	if rank > 0 && !d.delayed {
		time.AfterFunc(time.Duration(rank)*deadLeaderStagger, func() {
			select {
			case n.deadLeaderc <- deadLeader{node: d.node, delayed: true}:
			case <-n.stopc:
			}
		})
		return
	}
	n.cfg.Logger.Info("metadata: raft leader's process is gone, campaigning now", "node", n.cfg.NodeID, "leader", d.node)
	if !leaderGone {
		// An earlier campaign ended the lease already.
		_ = n.rn.Campaign()
		return
	}
	// MsgTimeoutNow from the current leader at the current term is what a
	// leadership transfer sends: the follower campaigns with the transfer
	// flag at once.
	_ = n.rn.Step(&raftpb.Message{Type: raftpb.MessageType_MsgTimeoutNow.Enum(), From: proto.Uint64(raftID(d.node)), To: proto.Uint64(n.id), Term: proto.Uint64(st.GetTerm())})
}

// maxProposalsPerReady bounds how many waiting proposals run takes before
// it handles the next Ready.
const maxProposalsPerReady = 1024

func (n *Node) propose(p proposal) {
	if err := n.rn.Propose(p.data); err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			err = &NotLeaderError{Leader: n.LeaderID()}
		}
		p.reply <- err
	}
}

// handleReady does the caller's duties of one raft Ready, in raft's order:
// persist (snapshot, entries, hard state), send, apply, advance.
func (n *Node) handleReady(rd raft.Ready) error {
	if rd.SoftState != nil {
		n.leader.Store(int64(rd.SoftState.Lead))
		leading := rd.SoftState.RaftState == raft.StateLeader
		if leading && !n.isLeader.Swap(true) {
			// A new leader runs its controller at once, not a tick later.
			select {
			case n.becameLeader <- struct{}{}:
			default:
			}
		}
		n.isLeader.Store(leading)
	}
	hasSnap := !raft.IsEmptySnap(rd.Snapshot)
	if hasSnap {
		if err := n.log.SaveSnapshot(rd.Snapshot, true); err != nil {
			return err
		}
	}
	if err := n.log.SaveMaybeSync(rd.HardState, rd.Entries, rd.MustSync); err != nil {
		return err
	}
	if hasSnap {
		if err := n.installSnapshot(rd.Snapshot); err != nil {
			return err
		}
	}
	if rd.HardState != nil {
		n.term.Store(rd.HardState.GetTerm())
		n.commit.Store(rd.HardState.GetCommit())
		if err := n.storage.SetHardState(rd.HardState); err != nil {
			return err
		}
	}
	if err := n.storage.Append(rd.Entries); err != nil {
		return err
	}
	n.transport.Send(rd.Messages)
	for _, m := range rd.Messages {
		if m.GetType() == raftpb.MessageType_MsgSnap {
			n.rn.ReportSnapshot(m.GetTo(), raft.SnapshotFinish)
		}
	}
	if err := n.applyEntries(rd.CommittedEntries); err != nil {
		return err
	}
	n.rn.Advance(rd)
	return nil
}

func (n *Node) installSnapshot(snap *raftpb.Snapshot) error {
	if err := n.storage.ApplySnapshot(snap); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
		return err
	}
	state, err := cluster.DecodeState(snap.GetData())
	if err != nil {
		return fmt.Errorf("snapshot from leader: %w", err)
	}
	n.snapshotsInstalled.Add(1)
	before := n.state
	n.state = state
	n.confState = snap.GetMetadata().GetConfState()
	n.appliedIndex = snap.GetMetadata().GetIndex()
	n.snapshotIndex = n.appliedIndex
	n.syncPeers()
	n.publish([]Applied{{Index: n.appliedIndex, Before: before, After: state, Snapshot: true}})
	return nil
}

func (n *Node) applyEntries(ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	type reply struct {
		to     chan proposeResult
		result proposeResult
	}
	var (
		applied []Applied
		replies []reply
	)
	for _, e := range ents {
		if e.GetIndex() <= n.appliedIndex {
			continue
		}
		n.appliedIndex = e.GetIndex()
		data := e.GetData()
		if t := e.GetType(); t == raftpb.EntryType_EntryConfChange || t == raftpb.EntryType_EntryConfChangeV2 {
			a, waiter, err := n.applyConfChange(e)
			if err != nil {
				return err
			}
			applied = append(applied, a)
			if waiter != 0 {
				n.mu.Lock()
				w := n.mu.waiters[waiter]
				n.mu.Unlock()
				if w != nil {
					replies = append(replies, reply{w, proposeResult{applied: a}})
				}
			}
			continue
		}
		if e.GetType() != raftpb.EntryType_EntryNormal || len(data) < 8 {
			continue // the leader's empty entry of a new term
		}
		id := binary.BigEndian.Uint64(data)
		rec, err := cluster.DecodeRecord(data[8:])
		var a Applied
		if err == nil {
			var next cluster.State
			next, err = cluster.Apply(n.state, rec)
			if err == nil {
				a = Applied{Index: e.GetIndex(), Record: rec, Before: n.state, After: next}
				n.state = next
				applied = append(applied, a)
				if _, ok := rec.(cluster.UpdateController); ok {
					n.syncPeers() // a member's raft address changed
				}
			}
		}
		n.mu.Lock()
		w := n.mu.waiters[id]
		n.mu.Unlock()
		if w != nil {
			replies = append(replies, reply{w, proposeResult{applied: a, err: err}})
		}
	}
	// Publish before answering: when Propose returns, State() shows the record.
	n.publish(applied)
	for _, r := range replies {
		select {
		case r.to <- r.result:
		default:
		}
	}
	return n.maybeSnapshot()
}

// publish makes the current state visible and queues records for subscribers.
func (n *Node) publish(applied []Applied) {
	n.view.Store(&appliedView{index: n.appliedIndex, state: n.state})
	n.mu.Lock()
	close(n.mu.appliedCh)
	n.mu.appliedCh = make(chan struct{})
	subs := make([]*subscriber, 0, len(n.mu.subs))
	for s := range n.mu.subs {
		subs = append(subs, s)
	}
	n.mu.Unlock()
	if len(applied) == 0 {
		return
	}
	for _, s := range subs {
		s.push(applied)
	}
}

// maybeSnapshot snapshots the state every SnapshotEvery applied entries
// and compacts the log below it (keeping CatchUpEntries).
func (n *Node) maybeSnapshot() error {
	if n.appliedIndex-n.snapshotIndex < n.cfg.SnapshotEvery {
		return nil
	}
	return n.snapshot(n.cfg.CatchUpEntries)
}

// snapshot snapshots the applied state with the current conf state and
// compacts the log below it, keeping keep entries.
func (n *Node) snapshot(keep uint64) error {
	data, err := n.state.Encode()
	if err != nil {
		return err
	}
	snap, err := n.storage.CreateSnapshot(n.appliedIndex, n.confState, data)
	if err != nil {
		return fmt.Errorf("create snapshot: %w", err)
	}
	if err := n.log.SaveSnapshot(snap, false); err != nil {
		return err
	}
	n.snapshotIndex = n.appliedIndex
	if n.appliedIndex <= keep {
		return nil
	}
	compact := n.appliedIndex - keep
	if err := n.storage.Compact(compact); err != nil && !errors.Is(err, raft.ErrCompacted) {
		return fmt.Errorf("compact: %w", err)
	}
	return n.log.Compact(compact)
}

// SnapshotIndex is the index of the latest local snapshot (tests, metrics).
func (n *Node) SnapshotIndex() uint64 {
	s, err := n.storage.Snapshot()
	if err != nil {
		return 0
	}
	return s.GetMetadata().GetIndex()
}

// SnapshotsInstalled counts the snapshots this node received from a leader
// because the entries it needed were compacted away (tests, metrics).
func (n *Node) SnapshotsInstalled() uint64 { return n.snapshotsInstalled.Load() }

// newClusterID returns a random cluster id like Kafka's (22 characters).
func newClusterID() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return base64.RawURLEncoding.EncodeToString(id[:])
}

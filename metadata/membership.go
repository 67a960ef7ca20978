package metadata

// Dynamic membership (KIP-853's AddRaftVoter and RemoveRaftVoter) over
// etcd raft's ConfChangeV2:
//   - AddVoter adds a node as a learner (a single-change ConfChangeV2 with
//     the node's address and directory id in its context), waits until it
//     holds every committed entry, then promotes it to voter. A node that
//     is already a learner is only promoted.
//   - RemoveVoter removes a voter (or a learner); a leader that removes
//     itself steps down (raft's StepDownOnRemoval), a removed node is out
//     of the configuration and never campaigns again.
//   - One change at a time: a change proposed while another is in the
//     leader's log unapplied is refused (ErrMembershipChangePending).
//   - Every node, when it applies a conf change, calls ApplyConfChange,
//     applies the resulting membership to the state machine as a
//     cluster.SetControllers record (so observers and snapshots carry the
//     voters with their addresses) and snapshots at that index, compacting
//     the log: a node added later always starts from a snapshot whose conf
//     state is the membership at its index, never from entries that
//     predate the conf changes. A restart loads that snapshot's conf state,
//     not --controllers.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/strata-streaming/strata/metadata/cluster"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Errors of AddVoter and RemoveVoter.
var (
	ErrDuplicateVoter          = errors.New("metadata: already a voter")
	ErrVoterNotFound           = errors.New("metadata: not a voter")
	ErrMembershipChangePending = errors.New("metadata: a membership change is in progress")
	ErrLastVoter               = errors.New("metadata: cannot remove the last voter")
	ErrNotCaughtUp             = errors.New("metadata: the new voter has not caught up")
)

// QuorumMember is one controller of the quorum with the raft address this
// node uses for it, and the listeners it announced (UpdateRaftVoter).
type QuorumMember struct {
	ID          int32
	Addr        string
	DirectoryID [16]byte
	Learner     bool
	Listeners   []cluster.ControllerListener
}

// Members is the quorum's membership as this node has applied it: the
// log's record once the membership changed at run time, --controllers
// until then. Addresses the log does not hold come from --controllers.
func (n *Node) Members() []QuorumMember { return n.membersOf(n.State()) }

func (n *Node) membersOf(st cluster.State) []QuorumMember {
	voters := n.cfg.Voters
	if n.cfg.Join && len(st.Controllers) == 0 {
		voters = slices.DeleteFunc(slices.Clone(voters), func(v Voter) bool { return v.ID == n.cfg.NodeID }) // not a member until added
	}
	return MembersOf(st, voters)
}

// MembersOf is the quorum's membership in st (the log's record, see
// cluster.SetControllers and cluster.UpdateController) with flagVoters
// (--controllers) supplying the addresses the log does not hold, or
// flagVoters alone while the log holds no membership. Ascending ids.
func MembersOf(st cluster.State, flagVoters []Voter) []QuorumMember {
	if len(st.Controllers) == 0 {
		out := make([]QuorumMember, 0, len(flagVoters))
		for _, v := range flagVoters {
			out = append(out, QuorumMember{ID: v.ID, Addr: v.Addr})
		}
		slices.SortFunc(out, func(a, b QuorumMember) int { return int(a.ID - b.ID) })
		return out
	}
	flagAddrs := map[int32]string{}
	for _, v := range flagVoters {
		flagAddrs[v.ID] = v.Addr
	}
	out := make([]QuorumMember, 0, len(st.Controllers))
	for _, c := range st.Controllers {
		addr := c.Addr
		if addr == "" {
			addr = flagAddrs[c.ID]
		}
		out = append(out, QuorumMember{ID: c.ID, Addr: addr, DirectoryID: c.DirectoryID, Learner: c.Learner, Listeners: slices.Clone(c.Listeners)})
	}
	return out
}

// peers are the members this node sends raft messages to (itself
// excluded), from the loop's state. --controllers entries stay reachable
// too: a joining node talks to the voters it was given before it knows
// the membership.
func (n *Node) peers() []Voter {
	seen := map[int32]bool{}
	var out []Voter
	for _, m := range n.membersOf(n.state) {
		if m.ID != n.cfg.NodeID && m.Addr != "" {
			out = append(out, Voter{ID: m.ID, Addr: m.Addr})
			seen[m.ID] = true
		}
	}
	if len(n.state.Controllers) == 0 {
		for _, v := range n.cfg.Voters {
			if v.ID != n.cfg.NodeID && !seen[v.ID] {
				out = append(out, v)
			}
		}
	}
	return out
}

// peerSetter is a transport whose peers change at run time (TCP).
type peerSetter interface{ SetPeers([]Voter) }

// syncPeers gives the transport the current members' addresses.
func (n *Node) syncPeers() {
	if ps, ok := n.transport.(peerSetter); ok {
		ps.SetPeers(n.peers())
	}
}

// confContext travels in a ConfChangeV2's context: who asked (to answer
// them when it applies) and, for an addition, the node's endpoint.
type confContext struct {
	Proposal    uint64          `json:"proposal"`
	ID          int32           `json:"id"`
	Addr        string          `json:"addr,omitempty"`
	DirectoryID cluster.TopicID `json:"directory_id"`
}

type confKind int

const (
	confAdd confKind = iota // learner first, or promote a learner
	confRemove
)

type confRequest struct {
	kind     confKind
	id       int32
	addr     string
	dir      [16]byte
	proposal uint64
	// promoted is set by the loop when the proposal promotes a learner.
	promoted *bool
	reply    chan error
}

// AddVoter makes node id (raft listener addr, KIP-853 directory id dir) a
// voter: as a learner first, then, once it holds every committed entry,
// a voter. It works on the leader only (*NotLeaderError elsewhere) and
// returns once the promotion is applied here, or ErrDuplicateVoter,
// ErrMembershipChangePending, or ErrNotCaughtUp (wrapping ctx's error)
// if the learner did not catch up within ctx; the learner then stays and
// a later AddVoter promotes it.
func (n *Node) AddVoter(ctx context.Context, id int32, addr string, dir [16]byte) error {
	if id < 0 {
		return fmt.Errorf("%w: node id %d", cluster.ErrInvalid, id)
	}
	if err := cluster.ValidateHostPort(addr); err != nil {
		return fmt.Errorf("%w: voter %d: %v", cluster.ErrInvalid, id, err)
	}
	for {
		promoted, err := n.changeMembership(ctx, confRequest{kind: confAdd, id: id, addr: addr, dir: dir})
		if err != nil || promoted {
			return err
		}
		if err := n.waitCaughtUp(ctx, id); err != nil {
			return err
		}
	}
}

// RemoveVoter removes node id (a voter or a learner) from the quorum; a
// non-zero dir must match the directory id it was added with. Leader only.
func (n *Node) RemoveVoter(ctx context.Context, id int32, dir [16]byte) error {
	_, err := n.changeMembership(ctx, confRequest{kind: confRemove, id: id, dir: dir})
	return err
}

// VoterUpdate is what a voter announces with UpdateRaftVoter (KIP-853):
// its raft address (what the other members dial), its named listeners
// and its supported kraft.version range.
type VoterUpdate struct {
	ID          int32
	DirectoryID [16]byte
	Addr        string
	Listeners   []cluster.ControllerListener
	KRaftMin    int16
	KRaftMax    int16
}

// UpdateVoter records u for a member of the quorum (leader only,
// *NotLeaderError elsewhere) through an UpdateController record; every
// member then dials u.Addr, and observers learn it from the log. A node
// that is not a member, or whose recorded directory id differs, is
// ErrVoterNotFound. It returns once the record is applied here.
func (n *Node) UpdateVoter(ctx context.Context, u VoterUpdate) error {
	if !n.IsLeader() {
		return &NotLeaderError{Leader: n.LeaderID()}
	}
	st := n.State()
	members := n.membersOf(st)
	i := slices.IndexFunc(members, func(m QuorumMember) bool { return m.ID == u.ID })
	if i < 0 {
		return fmt.Errorf("%w: node %d", ErrVoterNotFound, u.ID)
	}
	if d := members[i].DirectoryID; d != ([16]byte{}) && d != u.DirectoryID {
		return fmt.Errorf("%w: node %d has another directory id", ErrVoterNotFound, u.ID)
	}
	rec := cluster.UpdateController{
		ID: u.ID, DirectoryID: u.DirectoryID, Addr: u.Addr,
		Listeners: u.Listeners, KRaftMin: u.KRaftMin, KRaftMax: u.KRaftMax,
	}
	if len(st.Controllers) == 0 {
		for _, m := range members {
			rec.Voters = append(rec.Voters, m.ID)
		}
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	_, err := n.Propose(ctx, rec)
	if errors.Is(err, cluster.ErrControllerNotFound) {
		return fmt.Errorf("%w: %w", ErrVoterNotFound, err)
	}
	return err
}

// changeMembership proposes one conf change through the loop and waits
// until it is applied here.
func (n *Node) changeMembership(ctx context.Context, req confRequest) (promoted bool, err error) {
	req.proposal = n.nextID.Add(1)
	req.promoted = new(bool)
	req.reply = make(chan error, 1)
	done := make(chan proposeResult, 1)
	n.mu.Lock()
	if n.mu.err != nil {
		err := n.mu.err
		n.mu.Unlock()
		return false, err
	}
	n.mu.waiters[req.proposal] = done
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.mu.waiters, req.proposal)
		n.mu.Unlock()
	}()
	select {
	case n.confc <- req:
	case <-ctx.Done():
		return false, fmt.Errorf("metadata: membership change: %w", ctx.Err())
	case <-n.failed:
		return false, n.failure()
	}
	select {
	case err := <-req.reply:
		if err != nil {
			return false, err
		}
	case <-n.failed:
		return false, n.failure()
	}
	select {
	case r := <-done:
		return *req.promoted, r.err
	case <-ctx.Done():
		return false, fmt.Errorf("metadata: membership change not applied: %w", ctx.Err())
	case <-n.failed:
		return false, n.failure()
	}
}

// waitCaughtUp waits until learner id's log holds the leader's commit
// index, as the leader's progress shows.
func (n *Node) waitCaughtUp(ctx context.Context, id int32) error {
	for {
		st, err := n.raftStatus(ctx)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotCaughtUp, err)
		}
		if st.RaftState != raft.StateLeader {
			return &NotLeaderError{Leader: nodeID(st.Lead)}
		}
		pr, ok := st.Progress[raftID(id)]
		if !ok {
			return fmt.Errorf("%w: node %d left the configuration", ErrVoterNotFound, id)
		}
		if commit := st.HardState.GetCommit(); pr.Match >= commit {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: node %d at %d of %d: %w", ErrNotCaughtUp, id, pr.Match, st.HardState.GetCommit(), ctx.Err())
		case <-n.failed:
			return n.failure()
		case <-time.After(n.cfg.TickInterval / 2):
		}
	}
}

func (n *Node) raftStatus(ctx context.Context) (raft.Status, error) {
	reply := make(chan raft.Status, 1)
	select {
	case n.statusc <- reply:
	case <-ctx.Done():
		return raft.Status{}, ctx.Err()
	case <-n.failed:
		return raft.Status{}, n.failure()
	}
	select {
	case st := <-reply:
		return st, nil
	case <-ctx.Done():
		return raft.Status{}, ctx.Err()
	case <-n.failed:
		return raft.Status{}, n.failure()
	}
}

// proposeConfChange runs in the raft loop: it checks req against the
// configuration and proposes the conf change.
func (n *Node) proposeConfChange(req confRequest) error {
	if n.rn.BasicStatus().RaftState != raft.StateLeader {
		return &NotLeaderError{Leader: n.LeaderID()}
	}
	if n.confChangePending() {
		return ErrMembershipChangePending
	}
	cs := n.confState
	rid := raftID(req.id)
	isVoter := slices.Contains(cs.GetVoters(), rid) || slices.Contains(cs.GetVotersOutgoing(), rid)
	isLearner := slices.Contains(cs.GetLearners(), rid) || slices.Contains(cs.GetLearnersNext(), rid)
	cctx := confContext{Proposal: req.proposal, ID: req.id}
	var typ raftpb.ConfChangeType
	switch req.kind {
	case confAdd:
		switch {
		case isVoter:
			return fmt.Errorf("%w: node %d", ErrDuplicateVoter, req.id)
		case isLearner:
			typ = raftpb.ConfChangeType_ConfChangeAddNode
			*req.promoted = true
		default:
			typ = raftpb.ConfChangeType_ConfChangeAddLearnerNode
			cctx.Addr, cctx.DirectoryID = req.addr, req.dir
		}
	case confRemove:
		if !isVoter && !isLearner {
			return fmt.Errorf("%w: node %d", ErrVoterNotFound, req.id)
		}
		if c, ok := n.state.ControllerByID(req.id); ok && req.dir != ([16]byte{}) && c.DirectoryID != ([16]byte{}) && c.DirectoryID != req.dir {
			return fmt.Errorf("%w: node %d has another directory id", ErrVoterNotFound, req.id)
		}
		if isVoter && len(cs.GetVoters()) <= 1 {
			return ErrLastVoter
		}
		typ = raftpb.ConfChangeType_ConfChangeRemoveNode
	}
	body, err := json.Marshal(cctx)
	if err != nil {
		return err
	}
	cc := &raftpb.ConfChangeV2{
		Transition: raftpb.ConfChangeTransitionAuto.Enum(),
		Changes:    []*raftpb.ConfChangeSingle{{Type: typ.Enum(), NodeId: &rid}},
		Context:    body,
	}
	if err := n.rn.ProposeConfChange(cc); err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			return &NotLeaderError{Leader: n.LeaderID()}
		}
		return err
	}
	return nil
}

// confChangePending reports whether the log holds a conf change not
// applied yet (raft would drop a second one).
func (n *Node) confChangePending() bool {
	last, err := n.storage.LastIndex()
	if err != nil || last <= n.appliedIndex {
		return false
	}
	ents, err := n.storage.Entries(n.appliedIndex+1, last+1, 1<<62)
	if err != nil {
		return true // compacted or unavailable: be safe
	}
	for _, e := range ents {
		if e.GetType() != raftpb.EntryType_EntryNormal {
			return true
		}
	}
	return false
}

// applyConfChange applies a committed conf change entry (loop only): raft's
// ApplyConfChange, the membership record, the new peers and a snapshot at
// this index. It returns the applied record and the proposal to answer.
func (n *Node) applyConfChange(e *raftpb.Entry) (Applied, uint64, error) {
	var cc raftpb.ConfChangeI
	if e.GetType() == raftpb.EntryType_EntryConfChange {
		v1 := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), v1); err != nil {
			return Applied{}, 0, fmt.Errorf("conf change at %d: %w", e.GetIndex(), err)
		}
		cc = v1
	} else {
		v2 := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), v2); err != nil {
			return Applied{}, 0, fmt.Errorf("conf change at %d: %w", e.GetIndex(), err)
		}
		cc = v2
	}
	var cctx confContext
	if c := cc.AsV2().GetContext(); len(c) > 0 {
		// A context we cannot read only loses the address and the reply.
		if err := json.Unmarshal(c, &cctx); err != nil {
			cctx = confContext{ID: -1}
		}
	} else {
		cctx.ID = -1
	}
	n.confState = n.rn.ApplyConfChange(cc)
	rec := membershipAfter(n.state, n.confState, cctx)
	a := Applied{Index: e.GetIndex(), Record: rec, Before: n.state, After: n.state}
	next, err := cluster.Apply(n.state, rec)
	if err != nil {
		n.cfg.Logger.Error("metadata: membership record rejected", "index", e.GetIndex(), "err", err)
	} else {
		n.state = next
		a.After = next
	}
	n.syncPeers()
	n.cfg.Logger.Info("metadata: quorum membership changed", "node", n.cfg.NodeID, "index", e.GetIndex(), "voters", nodeIDs(n.confState.GetVoters()), "learners", nodeIDs(n.confState.GetLearners()))
	// Snapshot here and drop the log below: a node added from now on
	// starts from this snapshot's conf state.
	if err := n.snapshot(0); err != nil {
		return Applied{}, 0, err
	}
	return a, cctx.Proposal, nil
}

// membershipAfter is the quorum's membership record after a conf change:
// the voters and learners of cs, with the addresses and directory ids the
// state knew (or, for the node the change adds, that the change carried).
func membershipAfter(s cluster.State, cs *raftpb.ConfState, cctx confContext) cluster.SetControllers {
	known := map[int32]cluster.Controller{}
	for _, c := range s.Controllers {
		known[c.ID] = c
	}
	voters := map[uint64]bool{}
	for _, id := range append(slices.Clone(cs.GetVoters()), cs.GetVotersOutgoing()...) {
		voters[id] = true
	}
	ids := map[uint64]bool{}
	for _, l := range [][]uint64{cs.GetVoters(), cs.GetVotersOutgoing(), cs.GetLearners(), cs.GetLearnersNext()} {
		for _, id := range l {
			ids[id] = true
		}
	}
	var out cluster.SetControllers
	for id := range ids {
		c, ok := known[nodeID(id)]
		if !ok {
			c = cluster.Controller{ID: nodeID(id)}
		}
		if nodeID(id) == cctx.ID && cctx.Addr != "" {
			c.Addr, c.DirectoryID = cctx.Addr, cctx.DirectoryID
		}
		c.Learner = !voters[id]
		out.Controllers = append(out.Controllers, c)
	}
	slices.SortFunc(out.Controllers, func(a, b cluster.Controller) int { return int(a.ID - b.ID) })
	return out
}

func nodeIDs(ids []uint64) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = nodeID(id)
	}
	slices.Sort(out)
	return out
}

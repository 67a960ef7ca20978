package groups

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Join handles a JoinGroup. Its result comes back as a Reply to caller, in
// these Effects or in those of a later call (when the rebalance completes).
func (g *Group) Join(now time.Time, req JoinRequest, caller Caller) Effects {
	g.fireTimers(now)
	g.join(now, req, caller)
	g.fireTimers(now)
	return g.take()
}

func (g *Group) join(now time.Time, req JoinRequest, caller Caller) {
	fail := func(err *kerr.Error) { g.replyJoin(caller, joinError(req.MemberID, err)) }
	if g.consumer != nil && g.state != Dead {
		if len(g.consumer.members) > 0 {
			// Classic and consumer-protocol members do not mix.
			fail(kerr.InconsistentGroupProtocol)
			return
		}
		g.fromEmptyConsumerGroup(now)
	}
	switch {
	case req.SessionTimeout < g.cfg.MinSessionTimeout || req.SessionTimeout > g.cfg.MaxSessionTimeout:
		fail(kerr.InvalidSessionTimeout)
	case g.state == Dead:
		fail(kerr.CoordinatorNotAvailable)
	case !g.acceptJoiningMember(req.MemberID):
		fail(kerr.GroupMaxSizeReached)
	case !g.supportsProtocols(req.ProtocolType, req.Protocols):
		fail(kerr.InconsistentGroupProtocol)
	case req.MemberID == "":
		g.joinNewMember(now, req, caller)
	default:
		g.joinExistingMember(now, req, caller)
	}
}

// acceptJoiningMember applies group.max.size the way Kafka does: known
// members are always let in, new ones while there is room.
func (g *Group) acceptJoiningMember(memberID string) bool {
	if g.cfg.MaxSize <= 0 {
		return true
	}
	m := g.members[memberID]
	switch g.state {
	case PreparingRebalance:
		return (m != nil && m.awaitingJoin) || g.numAwaitingJoin < g.cfg.MaxSize
	case CompletingRebalance, Stable:
		return m != nil || len(g.members) < g.cfg.MaxSize
	}
	return true
}

func (g *Group) joinNewMember(now time.Time, req JoinRequest, caller Caller) {
	prefix := req.ClientID
	if req.InstanceID != nil {
		prefix = *req.InstanceID
	}
	newID := g.cfg.NewMemberID(prefix)
	if req.InstanceID != nil {
		if oldID, ok := g.staticMembers[*req.InstanceID]; ok {
			g.replaceStaticMember(now, oldID, newID, req, caller)
			return
		}
		g.addMemberAndRebalance(now, newID, req, caller)
		return
	}
	if req.RequireKnownMemberID {
		// KIP-394: the member must come back with this id; until then it
		// is pending and the rebalance waits for it.
		g.pendingMembers[newID] = now.Add(req.SessionTimeout)
		g.replyJoin(caller, joinError(newID, kerr.MemberIDRequired))
		return
	}
	g.addMemberAndRebalance(now, newID, req, caller)
}

func (g *Group) joinExistingMember(now time.Time, req JoinRequest, caller Caller) {
	id := req.MemberID
	if _, pending := g.pendingMembers[id]; pending {
		if req.InstanceID != nil {
			// Static members are never pending.
			g.replyJoin(caller, joinError(id, kerr.UnknownMemberID))
			return
		}
		delete(g.pendingMembers, id)
		g.addMemberAndRebalance(now, id, req, caller)
		return
	}
	if err := g.validateMember(id, req.InstanceID); err != nil {
		g.replyJoin(caller, joinError(id, err))
		return
	}
	m := g.members[id]
	switch g.state {
	case PreparingRebalance:
		g.updateMemberAndRebalance(now, m, req, caller)
	case CompletingRebalance:
		if m.matches(req.Protocols) {
			// The member lost its response: send it again.
			g.replyJoin(caller, g.joinResultFor(m, g.isLeader(id)))
			return
		}
		g.updateMemberAndRebalance(now, m, req, caller)
	case Stable:
		if g.isLeader(id) || !m.matches(req.Protocols) {
			// The leader rejoins to force a rebalance (new topics, for
			// instance); a follower with new metadata needs one too
			// (cooperative rebalancing relies on this).
			g.updateMemberAndRebalance(now, m, req, caller)
			return
		}
		g.replyJoin(caller, g.joinResultFor(m, false))
	default:
		g.replyJoin(caller, joinError(id, kerr.UnknownMemberID))
	}
}

func (g *Group) addMemberAndRebalance(now time.Time, id string, req JoinRequest, caller Caller) {
	m := &member{
		id:                     id,
		instanceID:             cloneString(req.InstanceID),
		clientID:               req.ClientID,
		clientHost:             req.ClientHost,
		sessionTimeout:         req.SessionTimeout,
		rebalanceTimeout:       req.RebalanceTimeout,
		protocolType:           req.ProtocolType,
		protocols:              cloneProtocols(req.Protocols),
		supportsSkipAssignment: req.SupportsSkipAssignment,
		isNew:                  true,
		awaitingJoin:           true,
		joinCaller:             caller,
		sessionDeadline:        now.Add(g.cfg.NewMemberJoinTimeout),
	}
	if g.state == PreparingRebalance && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.addMember(m)
	delete(g.pendingMembers, id)
	g.maybePrepareRebalance(now)
	g.tryCompleteJoin(now)
}

func (g *Group) updateMemberAndRebalance(now time.Time, m *member, req JoinRequest, caller Caller) {
	g.setProtocols(m, cloneProtocols(req.Protocols))
	m.rebalanceTimeout = req.RebalanceTimeout
	m.sessionTimeout = req.SessionTimeout
	m.supportsSkipAssignment = req.SupportsSkipAssignment
	g.setAwaitingJoin(m, true, caller)
	g.maybePrepareRebalance(now)
	g.tryCompleteJoin(now)
}

// replaceStaticMember gives a static member that rejoined without its
// member id a new one; the old id is fenced.
func (g *Group) replaceStaticMember(now time.Time, oldID, newID string, req JoinRequest, caller Caller) {
	currentLeader := g.leader
	m := g.members[oldID]
	if m.awaitingJoin {
		to := m.joinCaller
		g.setAwaitingJoin(m, false, nil)
		g.replyJoin(to, joinError(oldID, kerr.FencedInstanceID))
	}
	g.answerSync(m, SyncResult{Err: kerr.FencedInstanceID})

	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	g.order[slices.Index(g.order, oldID)] = newID
	g.staticMembers[*m.instanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}

	g.setProtocols(m, cloneProtocols(req.Protocols))
	m.rebalanceTimeout = req.RebalanceTimeout
	m.sessionTimeout = req.SessionTimeout
	m.supportsSkipAssignment = req.SupportsSkipAssignment
	m.sessionDeadline = now.Add(m.sessionTimeout)
	g.setAwaitingJoin(m, true, caller)

	switch g.state {
	case Stable:
		if g.selectProtocol() != g.protocol {
			g.maybePrepareRebalance(now)
			return
		}
		// Same protocol: no rebalance. The new id keeps the old one's
		// assignment; persist the change, then answer.
		g.storeGroup(now)
		res := g.joinResultFor(m, false)
		if req.SupportsSkipAssignment {
			// KIP-814: the leader learns it leads but must not assign.
			if g.isLeader(newID) {
				res.Members = g.memberList()
				res.SkipAssignment = true
			}
		} else {
			// Before v9 the old leader id is returned, so a restarted
			// static leader never runs an assignment that a Stable group
			// would ignore.
			res.LeaderID = currentLeader
		}
		g.answerJoin(m, res)
	case CompletingRebalance:
		// The leader may already be assigning to the old id: start over.
		g.prepareRebalance(now)
	case PreparingRebalance:
		g.tryCompleteJoin(now)
	}
}

// maybePrepareRebalance starts a rebalance unless one is running.
func (g *Group) maybePrepareRebalance(now time.Time) {
	switch g.state {
	case Stable, CompletingRebalance, Empty:
		g.prepareRebalance(now)
	}
}

func (g *Group) prepareRebalance(now time.Time) {
	if g.state == CompletingRebalance {
		g.resetAndPropagateAssignmentError(now, kerr.RebalanceInProgress)
	}
	clear(g.pendingSync)
	g.pendingSyncDeadline = time.Time{}
	g.rebalanceTimeout = 0
	for _, m := range g.members {
		g.rebalanceTimeout = max(g.rebalanceTimeout, m.rebalanceTimeout)
	}
	if g.state == Empty {
		delay := g.cfg.InitialRebalanceDelay
		g.initialDelay = true
		g.initialRemaining = max(g.rebalanceTimeout-delay, 0)
		g.joinDeadline = now.Add(delay)
	} else {
		g.initialDelay = false
		g.joinDeadline = now.Add(g.rebalanceTimeout)
	}
	g.transition(PreparingRebalance, now)
	g.tryCompleteJoin(now)
}

// resetAndPropagateAssignmentError clears the assignments and fails the
// SyncGroups waiting for them.
func (g *Group) resetAndPropagateAssignmentError(now time.Time, err *kerr.Error) {
	for _, id := range g.order {
		m := g.members[id]
		m.assignment = nil
		if g.answerSync(m, SyncResult{Err: err}) {
			m.sessionDeadline = now.Add(m.sessionTimeout)
		}
	}
}

// tryCompleteJoin completes the rebalance once every member has rejoined
// and no pending member is outstanding (never during the initial delay).
func (g *Group) tryCompleteJoin(now time.Time) {
	if g.state == PreparingRebalance && !g.initialDelay &&
		g.numAwaitingJoin == len(g.members) && len(g.pendingMembers) == 0 {
		g.completeJoin(now)
	}
}

// completeJoin ends the join phase: members that did not rejoin leave
// (static ones stay until their session expires), the next generation
// starts and every waiting member gets its JoinGroup response.
func (g *Group) completeJoin(now time.Time) {
	for _, id := range slices.Clone(g.order) {
		if m := g.members[id]; !m.awaitingJoin && !m.isStatic() {
			g.removeMember(id)
		}
	}
	if !g.electJoinedLeader() && len(g.members) > 0 {
		// Nobody rejoined: wait another rebalance timeout, by which the
		// silent members' sessions will have expired.
		g.initialDelay = false
		g.joinDeadline = now.Add(max(g.rebalanceTimeout, time.Millisecond))
		return
	}
	g.joinDeadline = time.Time{}
	g.initialDelay = false
	g.generation++
	if len(g.members) == 0 {
		g.protocol = ""
		g.computeSubscribedTopics()
		g.transition(Empty, now)
		g.storeGroup(now)
		return
	}
	g.protocol = g.selectProtocol()
	g.computeSubscribedTopics()
	g.transition(CompletingRebalance, now)
	for _, id := range g.order {
		m := g.members[id]
		g.answerJoin(m, g.joinResultFor(m, g.isLeader(id)))
		m.sessionDeadline = now.Add(m.sessionTimeout)
		m.isNew = false
		g.pendingSync[id] = true
	}
	g.pendingSyncDeadline = now.Add(g.rebalanceTimeout)
}

// electJoinedLeader keeps the leader if it rejoined, else picks the oldest
// member that did. It reports false when no member rejoined.
func (g *Group) electJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if g.members[g.leader].awaitingJoin {
		return true
	}
	for _, id := range g.order {
		if g.members[id].awaitingJoin {
			g.leader = id
			return true
		}
	}
	return false
}

// Sync handles a SyncGroup. Its result comes back as a Reply to caller, in
// these Effects or in those of the leader's SyncGroup.
func (g *Group) Sync(now time.Time, req SyncRequest, caller Caller) Effects {
	g.fireTimers(now)
	g.sync(now, req, caller)
	g.fireTimers(now)
	return g.take()
}

func (g *Group) sync(now time.Time, req SyncRequest, caller Caller) {
	fail := func(err *kerr.Error) { g.replySync(caller, SyncResult{Err: err}) }
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable)
		return
	}
	if err := g.validateMember(req.MemberID, req.InstanceID); err != nil {
		fail(err)
		return
	}
	switch {
	case req.Generation != g.generation:
		fail(kerr.IllegalGeneration)
		return
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocol:
		fail(kerr.InconsistentGroupProtocol)
		return
	}
	m := g.members[req.MemberID]
	switch g.state {
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress)
	case CompletingRebalance:
		if m.awaitingSync && m.syncCaller != caller {
			g.answerSync(m, SyncResult{Err: kerr.RebalanceInProgress})
		}
		m.awaitingSync, m.syncCaller = true, caller
		delete(g.pendingSync, m.id)
		if !g.isLeader(m.id) {
			return // wait for the leader's assignment
		}
		assigned := make(map[string][]byte, len(req.Assignments))
		for _, a := range req.Assignments {
			assigned[a.MemberID] = a.Assignment
		}
		for _, id := range g.order {
			a := assigned[id]
			if a == nil {
				a = []byte{}
			}
			g.members[id].assignment = a
		}
		g.storeGroup(now)
		g.transition(Stable, now)
		for _, id := range g.order {
			mm := g.members[id]
			if g.answerSync(mm, SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: mm.assignment}) {
				mm.sessionDeadline = now.Add(mm.sessionTimeout)
			}
		}
	case Stable:
		delete(g.pendingSync, m.id)
		g.replySync(caller, SyncResult{ProtocolType: g.protocolType, Protocol: g.protocol, Assignment: m.assignment})
		m.sessionDeadline = now.Add(m.sessionTimeout)
	default:
		fail(kerr.UnknownMemberID)
	}
}

// Heartbeat handles a Heartbeat and returns its error (nil for none).
func (g *Group) Heartbeat(now time.Time, memberID string, instanceID *string, generation int32) (*kerr.Error, Effects) {
	g.fireTimers(now)
	err := g.heartbeat(now, memberID, instanceID, generation)
	g.fireTimers(now)
	return err, g.take()
}

func (g *Group) heartbeat(now time.Time, memberID string, instanceID *string, generation int32) *kerr.Error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if err := g.validateMember(memberID, instanceID); err != nil {
		return err
	}
	if generation != g.generation {
		return kerr.IllegalGeneration
	}
	m := g.members[memberID]
	switch g.state {
	case PreparingRebalance:
		m.sessionDeadline = now.Add(m.sessionTimeout)
		return kerr.RebalanceInProgress
	case CompletingRebalance, Stable:
		// Members may heartbeat between their JoinGroup and SyncGroup.
		m.sessionDeadline = now.Add(m.sessionTimeout)
		return nil
	}
	return kerr.UnknownMemberID
}

// Leave handles a LeaveGroup and returns one error per member (nil for none).
func (g *Group) Leave(now time.Time, leaving []LeaveMember) ([]*kerr.Error, Effects) {
	g.fireTimers(now)
	errs := make([]*kerr.Error, len(leaving))
	for i, lm := range leaving {
		errs[i] = g.leave(now, lm)
	}
	g.fireTimers(now)
	return errs, g.take()
}

func (g *Group) leave(now time.Time, lm LeaveMember) *kerr.Error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if lm.MemberID == "" {
		// Administrative removal of a static member by instance id.
		if lm.InstanceID == nil {
			return kerr.UnknownMemberID
		}
		id, ok := g.staticMembers[*lm.InstanceID]
		if !ok {
			return kerr.UnknownMemberID
		}
		g.removeMemberAndUpdateGroup(now, g.members[id])
		return nil
	}
	if _, pending := g.pendingMembers[lm.MemberID]; pending {
		delete(g.pendingMembers, lm.MemberID)
		g.tryCompleteJoin(now)
		return nil
	}
	if err := g.validateMember(lm.MemberID, lm.InstanceID); err != nil {
		return err
	}
	g.removeMemberAndUpdateGroup(now, g.members[lm.MemberID])
	return nil
}

// removeMemberAndUpdateGroup removes a member (answering its waiting
// requests with UNKNOWN_MEMBER_ID) and rebalances the rest.
func (g *Group) removeMemberAndUpdateGroup(now time.Time, m *member) {
	g.answerJoin(m, joinError(m.id, kerr.UnknownMemberID))
	g.answerSync(m, SyncResult{Err: kerr.UnknownMemberID})
	g.removeMember(m.id)
	switch g.state {
	case Stable, CompletingRebalance:
		g.maybePrepareRebalance(now)
	case PreparingRebalance:
		g.tryCompleteJoin(now)
	}
}

// Tick fires the timeouts due at now.
func (g *Group) Tick(now time.Time) Effects {
	g.fireTimers(now)
	return g.take()
}

// NextDeadline is the earliest time at which a timeout fires; zero if none
// is scheduled.
func (g *Group) NextDeadline() time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if g.state == PreparingRebalance {
		consider(g.joinDeadline)
	}
	for _, t := range g.pendingMembers {
		consider(t)
	}
	for _, m := range g.members {
		consider(m.sessionDeadline)
	}
	consider(g.pendingSyncDeadline)
	if g.consumer != nil {
		g.consumer.nextDeadline(consider)
	}
	return next
}

// fireTimers fires every timeout due at now. Each firing moves or clears
// its deadline; the bound only guards against a bug looping forever.
func (g *Group) fireTimers(now time.Time) {
	for range 1000 {
		if !g.fireOneTimer(now) {
			return
		}
	}
}

func (g *Group) fireOneTimer(now time.Time) bool {
	if g.consumer != nil {
		return g.fireConsumerTimer(now)
	}
	due := func(t time.Time) bool { return !t.IsZero() && !now.Before(t) }
	if g.state == PreparingRebalance && due(g.joinDeadline) {
		if g.initialDelay && g.newMemberAdded && g.initialRemaining > 0 {
			// New members keep arriving: wait a little more, within the
			// rebalance timeout.
			g.newMemberAdded = false
			delay := min(g.cfg.InitialRebalanceDelay, g.initialRemaining)
			g.initialRemaining -= delay
			g.joinDeadline = now.Add(delay)
			return true
		}
		g.initialDelay = false
		g.completeJoin(now)
		return true
	}
	for id, deadline := range g.pendingMembers {
		if due(deadline) {
			delete(g.pendingMembers, id)
			g.tryCompleteJoin(now)
			return true
		}
	}
	for _, id := range g.order {
		m := g.members[id]
		if !due(m.sessionDeadline) {
			continue
		}
		if !m.isNew && (m.awaitingJoin || m.awaitingSync) {
			// Waiting members are bounded by the rebalance instead.
			m.sessionDeadline = time.Time{}
		} else {
			g.removeMemberAndUpdateGroup(now, m)
		}
		return true
	}
	if due(g.pendingSyncDeadline) {
		g.pendingSyncDeadline = time.Time{}
		if (g.state == CompletingRebalance || g.state == Stable) && len(g.pendingSync) > 0 {
			for _, id := range slices.Clone(g.order) {
				if g.pendingSync[id] {
					g.removeMember(id)
				}
			}
			g.prepareRebalance(now)
		}
		return true
	}
	return false
}

// Unload answers every waiting request with NOT_COORDINATOR: the caller is
// giving the group up (shutdown, or its partition's leadership moved).
func (g *Group) Unload() Effects {
	for _, id := range g.order {
		m := g.members[id]
		g.answerJoin(m, joinError(m.id, kerr.NotCoordinator))
		g.answerSync(m, SyncResult{Err: kerr.NotCoordinator})
	}
	return g.take()
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

func cloneProtocols(ps []Protocol) []Protocol {
	out := make([]Protocol, len(ps))
	for i, p := range ps {
		out[i] = Protocol{Name: p.Name, Metadata: append([]byte(nil), p.Metadata...)}
	}
	return out
}

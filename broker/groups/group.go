package groups

import (
	"bytes"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// member is one member of a group.
type member struct {
	id               string
	instanceID       *string
	clientID         string
	clientHost       string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []Protocol
	assignment       []byte

	// awaitingJoin / awaitingSync: a JoinGroup or SyncGroup of this member
	// waits for its response, to be sent to joinCaller / syncCaller.
	awaitingJoin bool
	joinCaller   Caller
	awaitingSync bool
	syncCaller   Caller

	supportsSkipAssignment bool
	// isNew: joined but not yet part of a completed generation.
	isNew bool
	// sessionDeadline is when the member expires without a heartbeat;
	// zero while none is scheduled.
	sessionDeadline time.Time
}

func (m *member) isStatic() bool { return m.instanceID != nil }

// metadata returns the member's metadata for the named protocol.
func (m *member) metadata(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// matches reports whether a rejoin carries the same protocols and metadata.
func (m *member) matches(protocols []Protocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i := range protocols {
		if protocols[i].Name != m.protocols[i].Name || !bytes.Equal(protocols[i].Metadata, m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// vote is the member's preferred protocol among the candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.Name] {
			return p.Name
		}
	}
	return ""
}

// Group is one consumer group: its members, generation and offsets. It is
// not safe for concurrent use. See the package documentation.
type Group struct {
	id  string
	cfg *Config

	state          State
	stateTimestamp time.Time // when the current state was entered
	protocolType   string    // "" until the first member joins (or for offset-only groups)
	protocol       string    // selected protocol; "" outside a generation
	generation     int32
	leader         string

	members        map[string]*member
	order          []string          // member ids in join order: leader succession, response order
	staticMembers  map[string]string // instance id → member id
	pendingMembers map[string]time.Time
	// pendingSync holds members that have not sent SyncGroup in this
	// generation; they are removed at pendingSyncDeadline.
	pendingSync         map[string]bool
	pendingSyncDeadline time.Time
	supportedProtocols  map[string]int
	numAwaitingJoin     int

	// The running rebalance: completes at joinDeadline (or earlier once
	// everyone has joined, unless in the initial delay).
	joinDeadline     time.Time
	initialDelay     bool
	initialRemaining time.Duration
	newMemberAdded   bool
	rebalanceTimeout time.Duration

	// subscribedTopics are the topics the members of a consumer group
	// subscribe to; subscribedKnown is false when they cannot be parsed.
	subscribedTopics map[string]bool
	subscribedKnown  bool

	offsets map[TopicPartition]OffsetAndMetadata
	// pendingTxnOffsets are transactional offset commits awaiting their
	// marker, by producer id (txn_offsets.go). offsetPositions is the
	// position of the record each committed offset came from, in
	// offsetRecords' count of the group's offset records in log order.
	pendingTxnOffsets map[int64]map[TopicPartition]txnOffset
	offsetPositions   map[TopicPartition]int64
	offsetRecords     int64

	// consumer is set for a group of the consumer (KIP-848) type; the
	// classic membership fields above are then unused.
	consumer *consumerGroup
	// persistedGroup and persistedMembers are the values of the consumer
	// group's records as last written (or replayed); see
	// consumer_records.go.
	persistedGroup   string
	persistedMembers map[string]string

	out Effects
}

// New returns an Empty group. cfg must outlive it.
func New(id string, cfg *Config, now time.Time) *Group {
	return &Group{
		id:                 id,
		cfg:                cfg,
		state:              Empty,
		stateTimestamp:     now,
		members:            map[string]*member{},
		staticMembers:      map[string]string{},
		pendingMembers:     map[string]time.Time{},
		pendingSync:        map[string]bool{},
		supportedProtocols: map[string]int{},
		offsets:            map[TopicPartition]OffsetAndMetadata{},
		pendingTxnOffsets:  map[int64]map[TopicPartition]txnOffset{},
		offsetPositions:    map[TopicPartition]int64{},
	}
}

// ID is the group id.
func (g *Group) ID() string { return g.id }

// State is the group's state.
func (g *Group) State() State { return g.state }

// Generation is the current generation id.
func (g *Group) Generation() int32 { return g.generation }

// ProtocolType is the group's protocol type ("" for offset-only groups).
func (g *Group) ProtocolType() string { return g.protocolType }

// Protocol is the selected protocol of the current generation.
func (g *Group) Protocol() string { return g.protocol }

// Leader is the leader's member id ("" without members).
func (g *Group) Leader() string { return g.leader }

// NumMembers is the number of members.
func (g *Group) NumMembers() int { return len(g.members) }

// IsPristine reports a group that holds nothing worth keeping: Empty, never
// rebalanced, no members, pending members or offsets (committed or
// pending in a transaction). Callers may drop it.
func (g *Group) IsPristine() bool {
	if g.consumer != nil {
		// A consumer group that ever had a member stays, Empty, after the
		// last one leaves, until DeleteGroups or the periodic offset
		// expiry removes it (Kafka's behaviour; ListGroups shows it).
		return len(g.consumer.members) == 0 && !g.hasOffsets() && g.consumer.groupEpoch == 0
	}
	return g.state == Empty && g.generation == 0 && g.protocolType == "" && len(g.members) == 0 &&
		len(g.pendingMembers) == 0 && !g.hasOffsets()
}

// take returns and clears the accumulated effects.
func (g *Group) take() Effects {
	g.persistConsumer()
	out := g.out
	g.out = Effects{}
	return out
}

func (g *Group) replyJoin(to Caller, res JoinResult) {
	g.out.Replies = append(g.out.Replies, Reply{To: to, Join: &res})
}

func (g *Group) replySync(to Caller, res SyncResult) {
	g.out.Replies = append(g.out.Replies, Reply{To: to, Sync: &res})
}

func joinError(memberID string, err *kerr.Error) JoinResult {
	return JoinResult{Err: err, MemberID: memberID, Generation: -1}
}

func (g *Group) transition(s State, now time.Time) {
	g.state = s
	g.stateTimestamp = now
}

func (g *Group) isLeader(id string) bool { return g.leader != "" && g.leader == id }

// supportsProtocols is Kafka's check that a joining member can be part of
// the group: the first member sets the type, later ones must match it and
// share a protocol with every member.
func (g *Group) supportsProtocols(protocolType string, protocols []Protocol) bool {
	if g.state == Empty {
		return protocolType != "" && len(protocols) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for _, p := range protocols {
		if g.supportedProtocols[p.Name] == len(g.members) {
			return true
		}
	}
	return false
}

// validateMember is Kafka's check of a request's member and instance ids.
func (g *Group) validateMember(memberID string, instanceID *string) *kerr.Error {
	if instanceID != nil {
		existing, ok := g.staticMembers[*instanceID]
		if !ok {
			return kerr.UnknownMemberID
		}
		if existing != memberID {
			return kerr.FencedInstanceID
		}
	}
	if _, ok := g.members[memberID]; !ok {
		return kerr.UnknownMemberID
	}
	return nil
}

func (g *Group) addMember(m *member) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	for _, p := range m.protocols {
		g.supportedProtocols[p.Name]++
	}
	if m.awaitingJoin {
		g.numAwaitingJoin++
	}
	if m.instanceID != nil {
		g.staticMembers[*m.instanceID] = m.id
	}
	if g.leader == "" {
		g.leader = m.id
	}
}

// removeMember drops a member from every index; the leader passes to the
// longest-standing remaining member.
func (g *Group) removeMember(id string) {
	m, ok := g.members[id]
	if !ok {
		return
	}
	for _, p := range m.protocols {
		g.supportedProtocols[p.Name]--
		if g.supportedProtocols[p.Name] <= 0 {
			delete(g.supportedProtocols, p.Name)
		}
	}
	if m.awaitingJoin {
		g.numAwaitingJoin--
	}
	delete(g.members, id)
	for i, x := range g.order {
		if x == id {
			g.order = append(g.order[:i:i], g.order[i+1:]...)
			break
		}
	}
	delete(g.pendingSync, id)
	if m.instanceID != nil && g.staticMembers[*m.instanceID] == id {
		delete(g.staticMembers, *m.instanceID)
	}
	if g.leader == id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// setProtocols replaces a member's protocols, keeping the vote counts.
func (g *Group) setProtocols(m *member, protocols []Protocol) {
	for _, p := range m.protocols {
		g.supportedProtocols[p.Name]--
		if g.supportedProtocols[p.Name] <= 0 {
			delete(g.supportedProtocols, p.Name)
		}
	}
	m.protocols = protocols
	for _, p := range protocols {
		g.supportedProtocols[p.Name]++
	}
}

// setAwaitingJoin registers (caller != nil) or clears a waiting JoinGroup.
// A JoinGroup that is replaced by a newer one of the same member is answered
// with REBALANCE_IN_PROGRESS, so no request waits forever.
func (g *Group) setAwaitingJoin(m *member, awaiting bool, caller Caller) {
	if m.awaitingJoin && awaiting && m.joinCaller != caller {
		g.replyJoin(m.joinCaller, joinError(m.id, kerr.RebalanceInProgress))
	}
	switch {
	case awaiting && !m.awaitingJoin:
		g.numAwaitingJoin++
	case !awaiting && m.awaitingJoin:
		g.numAwaitingJoin--
	}
	m.awaitingJoin = awaiting
	m.joinCaller = caller
	if !awaiting {
		m.joinCaller = nil
	}
}

// answerJoin sends a waiting member its JoinGroup result.
func (g *Group) answerJoin(m *member, res JoinResult) {
	if !m.awaitingJoin {
		return
	}
	to := m.joinCaller
	g.setAwaitingJoin(m, false, nil)
	g.replyJoin(to, res)
}

// answerSync sends a waiting member its SyncGroup result.
func (g *Group) answerSync(m *member, res SyncResult) bool {
	if !m.awaitingSync {
		return false
	}
	to := m.syncCaller
	m.awaitingSync, m.syncCaller = false, nil
	g.replySync(to, res)
	return true
}

// selectProtocol picks the protocol all members support with the most
// first-choice votes; ties go to the leader's (then the oldest member's)
// preference.
func (g *Group) selectProtocol() string {
	candidates := map[string]bool{}
	for name, n := range g.supportedProtocols {
		if n == len(g.members) {
			candidates[name] = true
		}
	}
	votes := map[string]int{}
	for _, id := range g.order {
		if v := g.members[id].vote(candidates); v != "" {
			votes[v]++
		}
	}
	preference := g.order
	if g.leader != "" {
		preference = append([]string{g.leader}, g.order...)
	}
	best, bestVotes := "", -1
	for _, id := range preference {
		for _, p := range g.members[id].protocols {
			if candidates[p.Name] && votes[p.Name] > bestVotes {
				best, bestVotes = p.Name, votes[p.Name]
			}
		}
	}
	return best
}

// memberList is the leader's view of the group for the current protocol.
func (g *Group) memberList() []JoinMember {
	out := make([]JoinMember, 0, len(g.members))
	for _, id := range g.order {
		m := g.members[id]
		out = append(out, JoinMember{MemberID: m.id, InstanceID: m.instanceID, Metadata: m.metadata(g.protocol)})
	}
	return out
}

// joinResultFor is the successful JoinGroup result of the current
// generation for a member.
func (g *Group) joinResultFor(m *member, withMembers bool) JoinResult {
	res := JoinResult{
		MemberID:     m.id,
		Generation:   g.generation,
		ProtocolType: g.protocolType,
		Protocol:     g.protocol,
		LeaderID:     g.leader,
	}
	if withMembers {
		res.Members = g.memberList()
	}
	return res
}

// computeSubscribedTopics reads the consumer subscriptions of the members
// for the selected protocol (Kafka does this per generation, KIP-496).
func (g *Group) computeSubscribedTopics() {
	g.subscribedTopics, g.subscribedKnown = nil, false
	if g.protocolType != ConsumerProtocolType {
		return
	}
	topics := map[string]bool{}
	if len(g.members) > 0 {
		if g.protocol == "" {
			return
		}
		for _, m := range g.members {
			var meta kmsg.ConsumerMemberMetadata
			if err := meta.ReadFrom(m.metadata(g.protocol)); err != nil {
				return
			}
			for _, t := range meta.Topics {
				topics[t] = true
			}
		}
	}
	g.subscribedTopics, g.subscribedKnown = topics, true
}

// isSubscribedToTopic reports whether a consumer group's members consume
// topic; unknown subscriptions count as subscribed.
func (g *Group) isSubscribedToTopic(topic string) bool {
	if !g.subscribedKnown {
		return true
	}
	return g.subscribedTopics[topic]
}

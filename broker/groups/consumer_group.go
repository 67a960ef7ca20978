package groups

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The next-generation consumer group protocol (KIP-848): a Group whose
// consumer field is set is a group of type "consumer". Members heartbeat
// with ConsumerGroupHeartbeat; the coordinator owns the assignment.
//
//   - The group epoch grows whenever what the assignment depends on
//     changes: a member joins or leaves, a subscription or the assignor
//     changes, or a subscribed topic gains partitions or appears. The target
//     assignment is then recomputed at once by the server-side assignor
//     ("uniform", the default, or "range"; the group uses the assignor its
//     members ask for, the most recent one on a disagreement) and takes the
//     group epoch as its assignment epoch.
//   - Each member converges to its target by KIP-848's reconciliation: a
//     member that owns partitions outside its target is first told to
//     revoke them (its epoch stays; state unrevoked) and must report them
//     gone within its rebalance timeout or be fenced; only then does it move
//     to the assignment epoch, receiving the target partitions no other
//     member still owns (state unreleased until all of them are free).
//     A partition is therefore never owned by two members at once.
//   - Epochs: a heartbeat with an epoch the member does not have gets
//     FENCED_MEMBER_EPOCH (except the previous epoch while the member owns
//     no more than it reports, a lost response); an unknown member id
//     UNKNOWN_MEMBER_ID. Epoch 0 (re)joins; a known member rejoining at 0
//     keeps its id and gets its assignment again. -1 leaves; -2 leaves a
//     static member, which keeps its assignment until its session expires
//     or its instance id rejoins.
//   - A member's session expires group.consumer.session.timeout.ms after
//     its last heartbeat.
//   - Committed offsets are fenced by member epoch (OffsetCommit v9+:
//     STALE_MEMBER_EPOCH for an older epoch, FENCED_MEMBER_EPOCH newer).
//   - The group's state (epochs, assignor, members with their current,
//     pending-revocation and target assignments) is persisted to
//     __consumer_offsets as Strata's own records (consumer_records.go), so
//     a restarted coordinator knows the members: they carry on at their
//     epochs, their sessions restarting from the load.

type reconcileState int8

const (
	memberStable     reconcileState = iota
	memberUnrevoked                 // waits for the member to revoke partitions
	memberUnreleased                // waits for other members to release partitions
)

type consumerMember struct {
	id               string
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	subscribedNames  []string
	subscribedRegex  string
	regex            *regexp.Regexp
	assignor         string

	epoch         int32
	previousEpoch int32
	state         reconcileState
	assigned      map[TopicPartition]bool // current assignment
	revoking      map[TopicPartition]bool // pending revocation
	// sentAssignment is false when the member's assignment changed since
	// the last response that carried it.
	sentAssignment bool

	sessionDeadline    time.Time
	revocationDeadline time.Time // while unrevoked
}

type consumerGroup struct {
	groupEpoch      int32
	assignmentEpoch int32
	assignor        string
	members         map[string]*consumerMember
	staticMembers   map[string]string // instance id → member id
	target          assignment
	owner           map[TopicPartition]string // member owning (or revoking) a partition
	// subscribedPartitions is the partition count of every subscribed
	// topic the target was computed from.
	subscribedPartitions map[string]int32
}

// sortedMemberIDs returns the member ids in order, so every walk over the
// members (assignment, description, replay) is deterministic.
func (cg *consumerGroup) sortedMemberIDs() []string {
	return slices.Sorted(maps.Keys(cg.members))
}

func newConsumerGroup() *consumerGroup {
	return &consumerGroup{
		members:              map[string]*consumerMember{},
		staticMembers:        map[string]string{},
		target:               assignment{},
		owner:                map[TopicPartition]string{},
		subscribedPartitions: map[string]int32{},
	}
}

// IsConsumerGroup reports a group of the consumer (KIP-848) type.
func (g *Group) IsConsumerGroup() bool { return g.consumer != nil }

// GroupType is the group's type as ListGroups v5 names it.
func (g *Group) GroupType() string {
	if g.consumer != nil {
		return "consumer"
	}
	return "classic"
}

// StateName is the group's state as Kafka names it for its type.
func (g *Group) StateName() string {
	if g.consumer == nil {
		return g.state.String()
	}
	cg := g.consumer
	switch {
	case g.state == Dead:
		return "Dead"
	case len(cg.members) == 0:
		return "Empty"
	case cg.assignmentEpoch < cg.groupEpoch:
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// ConsumerHeartbeat handles a ConsumerGroupHeartbeat. topics is the
// cluster's topics now.
func (g *Group) ConsumerHeartbeat(now time.Time, req ConsumerHeartbeatRequest, topics TopicCatalog) (ConsumerHeartbeatResult, Effects) {
	g.fireTimers(now)
	res := g.consumerHeartbeat(now, req, topics)
	g.fireTimers(now)
	if res.Err != nil {
		res.MemberEpoch = -1
		res.Assignment = nil
	}
	res.HeartbeatInterval = g.consumerHeartbeatInterval()
	return res, g.take()
}

// consumerSessionTimeout is the group's consumer.session.timeout.ms.
func (g *Group) consumerSessionTimeout() time.Duration {
	if g.cfg.ConsumerOverrides != nil {
		if d, _ := g.cfg.ConsumerOverrides(g.id); d > 0 {
			return d
		}
	}
	return g.cfg.ConsumerSessionTimeout
}

// consumerHeartbeatInterval is the group's consumer.heartbeat.interval.ms.
func (g *Group) consumerHeartbeatInterval() time.Duration {
	if g.cfg.ConsumerOverrides != nil {
		if _, d := g.cfg.ConsumerOverrides(g.id); d > 0 {
			return d
		}
	}
	return g.cfg.ConsumerHeartbeatInterval
}

func heartbeatError(memberID string, err *kerr.Error, msg string) ConsumerHeartbeatResult {
	return ConsumerHeartbeatResult{Err: err, ErrMessage: msg, MemberID: memberID, MemberEpoch: -1}
}

func validateHeartbeat(req ConsumerHeartbeatRequest) (ConsumerHeartbeatResult, bool) {
	bad := func(msg string) (ConsumerHeartbeatResult, bool) {
		return heartbeatError(req.MemberID, kerr.InvalidRequest, msg), false
	}
	switch {
	case req.MemberID == "":
		return bad("MemberId can't be empty.")
	case req.MemberEpoch < StaticLeaveEpoch:
		return bad(fmt.Sprintf("MemberEpoch %d is invalid.", req.MemberEpoch))
	case req.MemberEpoch == StaticLeaveEpoch && req.InstanceID == nil:
		return bad("InstanceId can't be null when MemberEpoch is -2.")
	case req.MemberEpoch == JoinEpoch:
		if req.RebalanceTimeout < 0 {
			return bad("RebalanceTimeoutMs must be provided in first request.")
		}
		if len(req.Owned) > 0 {
			return bad("TopicPartitions must be empty when (re-)joining.")
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return bad("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
		}
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != "" && !knownAssignor(*req.ServerAssignor) {
		return heartbeatError(req.MemberID, kerr.UnsupportedAssignor, "ServerAssignor "+*req.ServerAssignor+" is not supported."), false
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := regexp.Compile(*req.SubscribedTopicRegex); err != nil {
			return heartbeatError(req.MemberID, kerr.InvalidRegularExpression, err.Error()), false
		}
	}
	return ConsumerHeartbeatResult{}, true
}

func (g *Group) consumerHeartbeat(now time.Time, req ConsumerHeartbeatRequest, topics TopicCatalog) ConsumerHeartbeatResult {
	if g.state == Dead {
		return heartbeatError(req.MemberID, kerr.CoordinatorNotAvailable, "")
	}
	if res, ok := validateHeartbeat(req); !ok {
		return res
	}
	for i, t := range req.Owned {
		if t.Topic == "" {
			req.Owned[i].Topic = topics.ByID[t.TopicID]
		}
	}
	if g.consumer == nil {
		if len(g.members) > 0 || len(g.pendingMembers) > 0 {
			return heartbeatError(req.MemberID, kerr.GroupIDNotFound, "Group "+g.id+" is not a consumer group.")
		}
		if req.MemberEpoch != JoinEpoch {
			return heartbeatError(req.MemberID, kerr.UnknownMemberID, "")
		}
		g.toConsumerGroup(now)
	}
	cg := g.consumer
	if req.MemberEpoch == LeaveEpoch || req.MemberEpoch == StaticLeaveEpoch {
		return g.consumerLeave(now, req)
	}

	m := cg.members[req.MemberID]
	fresh := false // a new member, not a static member's replacement
	if req.MemberEpoch == JoinEpoch {
		if m == nil {
			var err *kerr.Error
			if m, fresh, err = g.admitConsumerMember(now, req); err != nil {
				return heartbeatError(req.MemberID, err, "")
			}
		} else {
			// A rejoin with the same id: the member dropped what it owned.
			g.releaseAll(m)
			m.epoch, m.previousEpoch, m.state = 0, 0, memberStable
		}
		m.sentAssignment = false
	} else {
		if m == nil {
			return heartbeatError(req.MemberID, kerr.UnknownMemberID, "")
		}
		if err := checkMemberEpoch(m, req); err != nil {
			return heartbeatError(req.MemberID, err, "")
		}
	}
	m.sessionDeadline = now.Add(g.consumerSessionTimeout())
	if g.updateConsumerMember(m, req) || fresh {
		g.bumpGroupEpoch()
	}
	g.refreshTarget(topics)
	if req.Owned != nil {
		g.noteOwned(m, req.Owned)
	}
	before := assignmentKey(m)
	g.reconcile(now, m)
	if assignmentKey(m) != before {
		m.sentAssignment = false
	}
	res := ConsumerHeartbeatResult{MemberID: m.id, MemberEpoch: m.epoch}
	if !m.sentAssignment || req.Owned != nil {
		res.Assignment = assignmentOf(m.assigned, topics)
		m.sentAssignment = true
	}
	// Members waiting on this one's revocations may proceed later; they do
	// so on their own next heartbeat.
	g.syncClassicView(now)
	return res
}

// checkMemberEpoch fences a heartbeat whose epoch is not the member's.
func checkMemberEpoch(m *consumerMember, req ConsumerHeartbeatRequest) *kerr.Error {
	if req.MemberEpoch == m.epoch {
		return nil
	}
	if req.MemberEpoch == m.previousEpoch && req.MemberEpoch < m.epoch && req.Owned != nil && ownsNoMoreThan(m, req.Owned) {
		return nil // the response that moved it on was lost
	}
	return kerr.FencedMemberEpoch
}

// ownsNoMoreThan reports that the member reports only partitions it is
// assigned.
func ownsNoMoreThan(m *consumerMember, owned []TopicPartitions) bool {
	for _, t := range owned {
		for _, p := range t.Partitions {
			if !m.assigned[TopicPartition{Topic: t.Topic, Partition: p}] {
				return false
			}
		}
	}
	return true
}

func (g *Group) toConsumerGroup(now time.Time) {
	g.consumer = newConsumerGroup()
	g.protocolType = ConsumerProtocolType
	g.protocol = ""
	g.leader = ""
	g.transition(Empty, now)
}

// admitConsumerMember adds a joining member, replacing a static member
// that left temporarily with the same instance id.
func (g *Group) admitConsumerMember(now time.Time, req ConsumerHeartbeatRequest) (m *consumerMember, fresh bool, err *kerr.Error) {
	cg := g.consumer
	if g.cfg.MaxSize > 0 && len(cg.members) >= g.cfg.MaxSize {
		return nil, false, kerr.GroupMaxSizeReached
	}
	m = &consumerMember{id: req.MemberID, assigned: map[TopicPartition]bool{}, revoking: map[TopicPartition]bool{}, assignor: cg.assignor}
	if req.InstanceID != nil {
		if oldID, ok := cg.staticMembers[*req.InstanceID]; ok {
			old := cg.members[oldID]
			if old.epoch != StaticLeaveEpoch {
				return nil, false, kerr.UnreleasedInstanceID
			}
			// The new member takes the old one's place and assignment.
			m.assigned, m.revoking = old.assigned, old.revoking
			m.subscribedNames, m.subscribedRegex, m.regex, m.assignor = old.subscribedNames, old.subscribedRegex, old.regex, old.assignor
			m.epoch, m.state = 0, old.state
			for tp := range m.assigned {
				cg.owner[tp] = m.id
			}
			for tp := range m.revoking {
				cg.owner[tp] = m.id
			}
			cg.target[m.id] = cg.target[oldID]
			delete(cg.target, oldID)
			delete(cg.members, oldID)
			cg.members[m.id] = m
			cg.staticMembers[*req.InstanceID] = m.id
			m.instanceID = cloneString(req.InstanceID)
			return m, false, nil
		}
	}
	cg.members[m.id] = m
	if req.InstanceID != nil {
		cg.staticMembers[*req.InstanceID] = m.id
	}
	return m, true, nil
}

// updateConsumerMember applies the request's fields; it reports whether
// the target assignment depends on what changed.
func (g *Group) updateConsumerMember(m *consumerMember, req ConsumerHeartbeatRequest) bool {
	changed := false
	if req.InstanceID != nil {
		m.instanceID = cloneString(req.InstanceID)
	}
	if req.RackID != nil {
		m.rackID = cloneString(req.RackID)
	}
	m.clientID, m.clientHost = req.ClientID, req.ClientHost
	if req.RebalanceTimeout >= 0 {
		m.rebalanceTimeout = req.RebalanceTimeout
	}
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		sort.Strings(names)
		names = slices.Compact(names)
		if !slices.Equal(names, m.subscribedNames) {
			m.subscribedNames = names
			changed = true
		}
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.subscribedRegex {
		m.subscribedRegex = *req.SubscribedTopicRegex
		m.regex = nil
		if m.subscribedRegex != "" {
			m.regex = regexp.MustCompile("^(?:" + m.subscribedRegex + ")$") // validated
		}
		changed = true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != "" && *req.ServerAssignor != m.assignor {
		m.assignor = *req.ServerAssignor
		if m.assignor != g.consumer.assignor {
			g.consumer.assignor = m.assignor
			changed = true
		}
	}
	return changed
}

func (g *Group) bumpGroupEpoch() {
	g.consumer.groupEpoch++
	g.generation = g.consumer.groupEpoch
}

// subscriptions resolves each member's subscription against the topics.
func (cg *consumerGroup) subscriptions(topics TopicCatalog) map[string][]string {
	out := map[string][]string{}
	for id, m := range cg.members {
		set := map[string]bool{}
		for _, t := range m.subscribedNames {
			if _, ok := topics.ByName[t]; ok {
				set[t] = true
			}
		}
		if m.regex != nil {
			// As Kafka, internal topics match too.
			for name := range topics.ByName {
				if m.regex.MatchString(name) {
					set[name] = true
				}
			}
		}
		for t := range set {
			out[id] = append(out[id], t)
		}
		sort.Strings(out[id])
	}
	return out
}

// refreshTarget recomputes the target assignment when the group epoch
// moved or the subscribed topics changed.
func (g *Group) refreshTarget(topics TopicCatalog) {
	cg := g.consumer
	subs := cg.subscriptions(topics)
	parts := map[string]int32{}
	for _, ts := range subs {
		for _, t := range ts {
			parts[t] = topics.ByName[t].Partitions
		}
	}
	if cg.assignmentEpoch == cg.groupEpoch && !mapsEqual(parts, cg.subscribedPartitions) {
		g.bumpGroupEpoch() // topics appeared or grew
	}
	if cg.assignmentEpoch == cg.groupEpoch {
		return
	}
	ids := cg.sortedMemberIDs()
	name := cg.assignor
	if name == "" {
		name = g.cfg.ConsumerAssignor
	}
	cg.target = assign(name, assignorSpec{members: ids, subscribed: subs, partitions: parts, previous: cg.target})
	cg.subscribedPartitions = parts
	cg.assignmentEpoch = cg.groupEpoch
}

func mapsEqual(a, b map[string]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// noteOwned learns from the member's report which pending revocations it
// has completed: once it reports none of them, they are released.
func (g *Group) noteOwned(m *consumerMember, owned []TopicPartitions) {
	if m.state != memberUnrevoked {
		return
	}
	for _, t := range owned {
		for _, p := range t.Partitions {
			if m.revoking[TopicPartition{Topic: t.Topic, Partition: p}] {
				return
			}
		}
	}
	for tp := range m.revoking {
		if g.consumer.owner[tp] == m.id {
			delete(g.consumer.owner, tp)
		}
	}
	m.revoking = map[TopicPartition]bool{}
	m.revocationDeadline = time.Time{}
	m.state = memberStable
}

// reconcile moves a member one step toward its target assignment.
func (g *Group) reconcile(now time.Time, m *consumerMember) {
	cg := g.consumer
	if m.state == memberUnrevoked {
		return // waiting for the member
	}
	target := cg.target[m.id]
	revoke := map[TopicPartition]bool{}
	for tp := range m.assigned {
		if !target[tp] {
			revoke[tp] = true
		}
	}
	if len(revoke) > 0 {
		for tp := range revoke {
			delete(m.assigned, tp)
			m.revoking[tp] = true
		}
		m.state = memberUnrevoked
		timeout := m.rebalanceTimeout
		if timeout <= 0 {
			timeout = g.consumerSessionTimeout()
		}
		m.revocationDeadline = now.Add(timeout)
		return
	}
	if m.epoch != cg.assignmentEpoch {
		m.previousEpoch, m.epoch = m.epoch, cg.assignmentEpoch
	}
	m.state = memberStable
	for tp := range target {
		if m.assigned[tp] {
			continue
		}
		if owner, ok := cg.owner[tp]; ok && owner != m.id {
			m.state = memberUnreleased
			continue
		}
		m.assigned[tp] = true
		cg.owner[tp] = m.id
	}
}

// releaseAll frees everything a member owns or is revoking.
func (g *Group) releaseAll(m *consumerMember) {
	cg := g.consumer
	for tp := range m.assigned {
		if cg.owner[tp] == m.id {
			delete(cg.owner, tp)
		}
	}
	for tp := range m.revoking {
		if cg.owner[tp] == m.id {
			delete(cg.owner, tp)
		}
	}
	m.assigned = map[TopicPartition]bool{}
	m.revoking = map[TopicPartition]bool{}
	m.revocationDeadline = time.Time{}
}

// consumerLeave handles epochs -1 and -2.
func (g *Group) consumerLeave(now time.Time, req ConsumerHeartbeatRequest) ConsumerHeartbeatResult {
	cg := g.consumer
	m := cg.members[req.MemberID]
	if m == nil && req.InstanceID != nil {
		if id, ok := cg.staticMembers[*req.InstanceID]; ok {
			m = cg.members[id]
		}
	}
	if m == nil {
		return heartbeatError(req.MemberID, kerr.UnknownMemberID, "")
	}
	if req.MemberEpoch == StaticLeaveEpoch && m.instanceID != nil {
		// Kept, with its assignment, until the session expires or the
		// instance rejoins.
		m.epoch = StaticLeaveEpoch
		m.sessionDeadline = now.Add(g.consumerSessionTimeout())
		g.syncClassicView(now)
		return ConsumerHeartbeatResult{MemberID: m.id, MemberEpoch: StaticLeaveEpoch}
	}
	g.removeConsumerMember(now, m)
	return ConsumerHeartbeatResult{MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
}

func (g *Group) removeConsumerMember(now time.Time, m *consumerMember) {
	cg := g.consumer
	g.releaseAll(m)
	delete(cg.members, m.id)
	delete(cg.target, m.id)
	if m.instanceID != nil && cg.staticMembers[*m.instanceID] == m.id {
		delete(cg.staticMembers, *m.instanceID)
	}
	g.bumpGroupEpoch()
	g.syncClassicView(now)
}

// syncClassicView keeps the fields shared with classic groups (state,
// generation) meaningful: Stable with members, Empty without.
func (g *Group) syncClassicView(now time.Time) {
	want := Stable
	if len(g.consumer.members) == 0 {
		want = Empty
	}
	if g.state != want {
		g.transition(want, now)
	}
}

// fireConsumerTimer expires one member whose session or revocation
// deadline passed.
func (g *Group) fireConsumerTimer(now time.Time) bool {
	cg := g.consumer
	due := func(t time.Time) bool { return !t.IsZero() && !now.Before(t) }
	for _, m := range cg.members {
		if due(m.sessionDeadline) || due(m.revocationDeadline) {
			g.removeConsumerMember(now, m)
			return true
		}
	}
	return false
}

func (cg *consumerGroup) nextDeadline(consider func(time.Time)) {
	for _, m := range cg.members {
		consider(m.sessionDeadline)
		consider(m.revocationDeadline)
	}
}

// validateConsumerCommit fences an OffsetCommit to a consumer group by
// member epoch.
func (g *Group) validateConsumerCommit(now time.Time, req CommitRequest) *kerr.Error {
	cg := g.consumer
	if req.Generation < 0 && req.MemberID == "" && len(cg.members) == 0 {
		return nil // admin tools and simple consumers
	}
	m := cg.members[req.MemberID]
	if m == nil {
		return kerr.UnknownMemberID
	}
	switch {
	case req.Generation > m.epoch:
		return kerr.FencedMemberEpoch
	case req.Generation < m.epoch:
		return kerr.StaleMemberEpoch
	}
	return nil
}

// assignmentKey is a comparable summary of the member's assignment.
func assignmentKey(m *consumerMember) string {
	tps := make([]TopicPartition, 0, len(m.assigned))
	for tp := range m.assigned {
		tps = append(tps, tp)
	}
	sortTopicPartitions(tps)
	return fmt.Sprint(m.epoch, tps)
}

func assignmentOf(set map[TopicPartition]bool, topics TopicCatalog) []TopicPartitions {
	byTopic := map[string][]int32{}
	for tp := range set {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	names := make([]string, 0, len(byTopic))
	for t := range byTopic {
		names = append(names, t)
	}
	sort.Strings(names)
	out := []TopicPartitions{}
	for _, t := range names {
		ps := byTopic[t]
		slices.Sort(ps)
		out = append(out, TopicPartitions{TopicID: topics.ByName[t].ID, Topic: t, Partitions: ps})
	}
	return out
}

func sortedSet(set map[TopicPartition]bool) []TopicPartition {
	out := make([]TopicPartition, 0, len(set))
	for tp := range set {
		out = append(out, tp)
	}
	sortTopicPartitions(out)
	return out
}

// DescribeConsumer describes a consumer group; ok is false for a classic
// group.
func (g *Group) DescribeConsumer() (d ConsumerDescription, ok bool) {
	cg := g.consumer
	if cg == nil {
		return d, false
	}
	d = ConsumerDescription{State: g.StateName(), GroupEpoch: cg.groupEpoch, AssignmentEpoch: cg.assignmentEpoch, Assignor: cg.assignor}
	if d.Assignor == "" {
		d.Assignor = g.cfg.ConsumerAssignor
	}
	ids := cg.sortedMemberIDs()
	for _, id := range ids {
		m := cg.members[id]
		md := ConsumerMemberDescription{
			MemberID: m.id, InstanceID: cloneString(m.instanceID), RackID: cloneString(m.rackID),
			MemberEpoch: m.epoch, ClientID: m.clientID, ClientHost: m.clientHost,
			SubscribedTopicNames: slices.Clone(m.subscribedNames),
			Assignment:           sortedSet(m.assigned),
			TargetAssignment:     sortedSet(cg.target[id]),
		}
		if md.SubscribedTopicNames == nil {
			md.SubscribedTopicNames = []string{}
		}
		if m.subscribedRegex != "" {
			re := m.subscribedRegex
			md.SubscribedTopicRegex = &re
		}
		d.Members = append(d.Members, md)
	}
	return d, true
}

// consumerMembersDescription lists the members for DescribeGroups.
func (g *Group) consumerMembersDescription() []MemberDescription {
	d, _ := g.DescribeConsumer()
	out := make([]MemberDescription, 0, len(d.Members))
	for _, m := range d.Members {
		out = append(out, MemberDescription{
			MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			Assignment: encodeConsumerAssignment(m.Assignment),
		})
	}
	return out
}

// encodeConsumerAssignment is an assignment in the classic consumer
// protocol's format (ConsumerMemberAssignment v0), so tools that decode
// DescribeGroups assignments read it.
func encodeConsumerAssignment(tps []TopicPartition) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	for _, tp := range tps {
		if n := len(a.Topics); n > 0 && a.Topics[n-1].Topic == tp.Topic {
			a.Topics[n-1].Partitions = append(a.Topics[n-1].Partitions, tp.Partition)
			continue
		}
		t := kmsg.NewConsumerMemberAssignmentTopic()
		t.Topic = tp.Topic
		t.Partitions = []int32{tp.Partition}
		a.Topics = append(a.Topics, t)
	}
	return a.AppendTo(nil)
}

// fromEmptyConsumerGroup turns an empty consumer group back into a classic
// one (a classic JoinGroup to it), keeping its offsets.
func (g *Group) fromEmptyConsumerGroup(now time.Time) {
	g.persistConsumer()
	g.consumer = nil
	g.persistConsumer() // tombstones, ahead of the classic group's records
	// A new classic group, as in Kafka (and as the replay of those
	// tombstones gives): its first generation is 1, not the consumer
	// group's epoch + 1.
	g.generation = 0
	g.protocolType = ""
	g.transition(Empty, now)
}

package groups

// MemberDescription is one member as DescribeGroups shows it.
type MemberDescription struct {
	MemberID   string
	InstanceID *string
	ClientID   string
	ClientHost string
	Metadata   []byte // for the selected protocol
	Assignment []byte
}

// Description is a group as DescribeGroups shows it.
type Description struct {
	State        State
	StateName    string // Kafka's name for the state in the group's type
	GroupType    string // "classic" or "consumer"
	ProtocolType string
	Protocol     string
	Members      []MemberDescription
}

// Describe summarises the group as Kafka does: protocol, member metadata
// and assignments only while Stable.
func (g *Group) Describe() Description {
	d := Description{State: g.state, ProtocolType: g.protocolType, StateName: g.StateName(), GroupType: g.GroupType()}
	if g.consumer != nil {
		d.Members = g.consumerMembersDescription()
		return d
	}
	stable := g.state == Stable
	if stable {
		d.Protocol = g.protocol
	}
	for _, id := range g.order {
		m := g.members[id]
		md := MemberDescription{MemberID: m.id, InstanceID: cloneString(m.instanceID), ClientID: m.clientID, ClientHost: m.clientHost}
		if stable {
			md.Metadata = m.metadata(g.protocol)
			md.Assignment = m.assignment
		}
		d.Members = append(d.Members, md)
	}
	return d
}

// Snapshot is a consistent copy of a group for monitoring: its membership
// (with assignments, in every state) and its committed offsets.
type Snapshot struct {
	Group        string
	State        State
	StateName    string // Kafka's name for the state in the group's type
	GroupType    string // "classic" or "consumer"
	ProtocolType string
	Protocol     string
	Generation   int32
	Leader       string
	Members      []MemberDescription
	Offsets      []CommitOffset
}

// Snapshot copies the group's state.
func (g *Group) Snapshot() Snapshot {
	s := Snapshot{
		Group:        g.id,
		State:        g.state,
		StateName:    g.StateName(),
		GroupType:    g.GroupType(),
		ProtocolType: g.protocolType,
		Protocol:     g.protocol,
		Generation:   g.generation,
		Leader:       g.leader,
		Offsets:      g.Offsets(),
	}
	if g.consumer != nil {
		s.Members = g.consumerMembersDescription()
		return s
	}
	for _, id := range g.order {
		m := g.members[id]
		s.Members = append(s.Members, MemberDescription{
			MemberID:   m.id,
			InstanceID: cloneString(m.instanceID),
			ClientID:   m.clientID,
			ClientHost: m.clientHost,
			Metadata:   append([]byte(nil), m.metadata(g.protocol)...),
			Assignment: append([]byte(nil), m.assignment...),
		})
	}
	return s
}

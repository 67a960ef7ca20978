package groups

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrCorruptRecord reports a __consumer_offsets record that cannot be decoded.
var ErrCorruptRecord = errors.New("groups: corrupt __consumer_offsets record")

// Record is one __consumer_offsets record: an offset commit (IsOffset) or
// a group's metadata. A nil Offset or Metadata is a tombstone.
type Record struct {
	Group string

	IsOffset       bool
	TopicPartition TopicPartition
	Offset         *OffsetAndMetadata

	Metadata *GroupMetadata

	// A consumer (KIP-848) group's own record (Strata's format, see
	// consumer_records.go), or one of its members' (MemberID).
	IsConsumerGroup  bool
	ConsumerGroup    *ConsumerGroupMetadata
	IsConsumerMember bool
	MemberID         string
	ConsumerMember   *ConsumerMemberMetadata
}

// GroupMetadata is the persisted state of a group's current generation.
type GroupMetadata struct {
	ProtocolType   string
	Generation     int32
	Protocol       string // "" for none
	Leader         string // "" for none
	StateTimestamp int64  // ms when the group entered its state; -1 if unknown
	Members        []MemberMetadata
}

// MemberMetadata is one persisted member.
type MemberMetadata struct {
	MemberID           string
	InstanceID         *string
	ClientID           string
	ClientHost         string
	RebalanceTimeoutMs int32
	SessionTimeoutMs   int32
	Subscription       []byte // the member's metadata for the selected protocol
	Assignment         []byte
}

// Key versions Kafka uses in __consumer_offsets.
const (
	offsetCommitKeyVersion  = 1 // 0 and 1 are both offset commits
	groupMetadataKeyVersion = 2
)

// EncodeRecord returns Kafka's key and value bytes for r (value nil for a
// tombstone).
func EncodeRecord(r Record) (key, value []byte) {
	switch {
	case r.IsConsumerGroup:
		key = consumerGroupKey(r.Group)
		if r.ConsumerGroup != nil {
			value = encodeConsumerGroupValue(r.ConsumerGroup)
		}
		return key, value
	case r.IsConsumerMember:
		key = consumerMemberKey(r.Group, r.MemberID)
		if r.ConsumerMember != nil {
			value = encodeConsumerMemberValue(r.ConsumerMember)
		}
		return key, value
	}
	if r.IsOffset {
		k := kmsg.NewOffsetCommitKey()
		k.Version = offsetCommitKeyVersion
		k.Group, k.Topic, k.Partition = r.Group, r.TopicPartition.Topic, r.TopicPartition.Partition
		key = k.AppendTo(nil)
		if r.Offset == nil {
			return key, nil
		}
		v := kmsg.NewOffsetCommitValue()
		v.Version = 3
		v.Offset = r.Offset.Offset
		v.LeaderEpoch = r.Offset.LeaderEpoch
		v.Metadata = r.Offset.Metadata
		v.CommitTimestamp = r.Offset.CommitTimestamp
		if r.Offset.ExpireTimestamp >= 0 {
			// Kafka writes version 1, which has the expire timestamp
			// (and no leader epoch), for such commits.
			v.Version = 1
			v.ExpireTimestamp = r.Offset.ExpireTimestamp
		}
		return key, v.AppendTo(nil)
	}
	k := kmsg.NewGroupMetadataKey()
	k.Version = groupMetadataKeyVersion
	k.Group = r.Group
	key = k.AppendTo(nil)
	if r.Metadata == nil {
		return key, nil
	}
	md := r.Metadata
	v := kmsg.NewGroupMetadataValue()
	v.Version = 3
	v.ProtocolType = md.ProtocolType
	v.Generation = md.Generation
	if md.Protocol != "" {
		v.Protocol = kmsg.StringPtr(md.Protocol)
	}
	if md.Leader != "" {
		v.Leader = kmsg.StringPtr(md.Leader)
	}
	v.CurrentStateTimestamp = md.StateTimestamp
	v.Members = make([]kmsg.GroupMetadataValueMember, 0, len(md.Members))
	for _, m := range md.Members {
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID = m.MemberID
		vm.InstanceID = m.InstanceID
		vm.ClientID = m.ClientID
		vm.ClientHost = m.ClientHost
		vm.RebalanceTimeoutMillis = m.RebalanceTimeoutMs
		vm.SessionTimeoutMillis = m.SessionTimeoutMs
		vm.Subscription = m.Subscription
		vm.Assignment = m.Assignment
		v.Members = append(v.Members, vm)
	}
	return key, v.AppendTo(nil)
}

// DecodeRecord decodes a __consumer_offsets record. known is false for a
// key version this package does not handle (newer Kafka coordinators write
// other record types); such records are skipped, not errors.
func DecodeRecord(key, value []byte) (r Record, known bool, err error) {
	if len(key) < 2 {
		return Record{}, false, fmt.Errorf("%w: key of %d bytes", ErrCorruptRecord, len(key))
	}
	switch version := int16(binary.BigEndian.Uint16(key)); version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return Record{}, true, fmt.Errorf("%w: offset commit key: %v", ErrCorruptRecord, err)
		}
		r = Record{Group: k.Group, IsOffset: true, TopicPartition: TopicPartition{Topic: k.Topic, Partition: k.Partition}}
		if value == nil {
			return r, true, nil
		}
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return Record{}, true, fmt.Errorf("%w: offset commit value: %v", ErrCorruptRecord, err)
		}
		om := OffsetAndMetadata{Offset: v.Offset, LeaderEpoch: v.LeaderEpoch, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp, ExpireTimestamp: -1}
		if v.Version < 3 {
			om.LeaderEpoch = -1
		}
		if v.Version == 1 {
			om.ExpireTimestamp = v.ExpireTimestamp
		}
		r.Offset = &om
		return r, true, nil
	case groupMetadataKeyVersion:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return Record{}, true, fmt.Errorf("%w: group metadata key: %v", ErrCorruptRecord, err)
		}
		r = Record{Group: k.Group}
		if value == nil {
			return r, true, nil
		}
		var v kmsg.GroupMetadataValue
		if err := v.ReadFrom(value); err != nil {
			return Record{}, true, fmt.Errorf("%w: group metadata value: %v", ErrCorruptRecord, err)
		}
		md := &GroupMetadata{ProtocolType: v.ProtocolType, Generation: v.Generation, StateTimestamp: v.CurrentStateTimestamp}
		if v.Version < 2 {
			md.StateTimestamp = -1
		}
		if v.Protocol != nil {
			md.Protocol = *v.Protocol
		}
		if v.Leader != nil {
			md.Leader = *v.Leader
		}
		for _, vm := range v.Members {
			rebalance := vm.RebalanceTimeoutMillis
			if v.Version < 1 {
				rebalance = vm.SessionTimeoutMillis
			}
			md.Members = append(md.Members, MemberMetadata{
				MemberID:           vm.MemberID,
				InstanceID:         vm.InstanceID,
				ClientID:           vm.ClientID,
				ClientHost:         vm.ClientHost,
				RebalanceTimeoutMs: rebalance,
				SessionTimeoutMs:   vm.SessionTimeoutMillis,
				Subscription:       vm.Subscription,
				Assignment:         vm.Assignment,
			})
		}
		r.Metadata = md
		return r, true, nil
	case consumerGroupKeyVersion, consumerMemberKeyVersion:
		r, err := decodeConsumerRecord(version, key, value)
		return r, true, err
	default:
		return Record{}, false, nil
	}
}

// Replay applies any record read back from the log outside a
// transactional batch (those go to ReplayTxnOffset, their markers to
// ReplayTxnMarker).
func (g *Group) Replay(now time.Time, r Record) {
	switch {
	case r.IsOffset:
		g.ReplayOffset(r.TopicPartition, r.Offset)
	case r.IsConsumerGroup:
		g.ReplayConsumerGroup(now, r.ConsumerGroup)
	case r.IsConsumerMember:
		g.ReplayConsumerMember(now, r.MemberID, r.ConsumerMember)
	default:
		g.ReplayMetadata(now, r.Metadata)
	}
}

// storeGroup records the group's current metadata.
func (g *Group) storeGroup(now time.Time) {
	md := g.metadata(now)
	g.out.Records = append(g.out.Records, Record{Group: g.id, Metadata: &md})
}

// metadata is the group's persisted form.
func (g *Group) metadata(now time.Time) GroupMetadata {
	md := GroupMetadata{
		ProtocolType:   g.protocolType,
		Generation:     g.generation,
		Protocol:       g.protocol,
		Leader:         g.leader,
		StateTimestamp: -1,
	}
	if !g.stateTimestamp.IsZero() {
		md.StateTimestamp = g.stateTimestamp.UnixMilli()
	}
	for _, id := range g.order {
		m := g.members[id]
		md.Members = append(md.Members, MemberMetadata{
			MemberID:           m.id,
			InstanceID:         cloneString(m.instanceID),
			ClientID:           m.clientID,
			ClientHost:         m.clientHost,
			RebalanceTimeoutMs: int32(m.rebalanceTimeout.Milliseconds()),
			SessionTimeoutMs:   int32(m.sessionTimeout.Milliseconds()),
			Subscription:       m.metadata(g.protocol),
			Assignment:         m.assignment,
		})
	}
	return md
}

// ReplayMetadata applies a group metadata record (nil: its tombstone) read
// back from the log, keeping the group's offsets. As Kafka does, a group
// with members comes back Stable, its members' sessions starting now: they
// carry on heartbeating, or expire and are rebalanced away.
func (g *Group) ReplayMetadata(now time.Time, md *GroupMetadata) {
	fresh := New(g.id, g.cfg, now)
	fresh.offsets = g.offsets
	fresh.pendingTxnOffsets = g.pendingTxnOffsets
	fresh.offsetPositions = g.offsetPositions
	fresh.offsetRecords = g.offsetRecords
	*g = *fresh
	if md == nil {
		return
	}
	g.protocolType = md.ProtocolType
	g.generation = md.Generation
	// Without a state timestamp (records before v2) retention counts from
	// each offset's commit, as in Kafka.
	g.stateTimestamp = time.Time{}
	if md.StateTimestamp >= 0 {
		g.stateTimestamp = time.UnixMilli(md.StateTimestamp)
	}
	if len(md.Members) == 0 || md.Protocol == "" {
		g.state = Empty
		g.computeSubscribedTopics()
		return
	}
	g.state = Stable
	g.protocol = md.Protocol
	for _, mm := range md.Members {
		m := &member{
			id:               mm.MemberID,
			instanceID:       cloneString(mm.InstanceID),
			clientID:         mm.ClientID,
			clientHost:       mm.ClientHost,
			sessionTimeout:   time.Duration(mm.SessionTimeoutMs) * time.Millisecond,
			rebalanceTimeout: time.Duration(mm.RebalanceTimeoutMs) * time.Millisecond,
			protocolType:     md.ProtocolType,
			protocols:        []Protocol{{Name: md.Protocol, Metadata: mm.Subscription}},
			assignment:       mm.Assignment,
		}
		m.sessionDeadline = now.Add(m.sessionTimeout)
		g.addMember(m)
	}
	if _, ok := g.members[md.Leader]; ok {
		g.leader = md.Leader
	}
	g.computeSubscribedTopics()
}

// ReplayOffset applies an offset record (nil: its tombstone, which also
// drops transactional offsets pending for tp) read back from the log
// outside a transaction. See ReplayTxnOffset for the others.
func (g *Group) ReplayOffset(tp TopicPartition, o *OffsetAndMetadata) {
	if o == nil {
		g.deleteOffset(tp)
		return
	}
	g.setOffset(tp, *o)
}

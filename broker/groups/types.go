package groups

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// State is a group's state, named as Kafka names it.
type State int8

const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	case Dead:
		return "Dead"
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// ConsumerProtocolType is the protocol type of Kafka consumers; the group
// reads their subscriptions (to know which topics are in use) only then.
const ConsumerProtocolType = "consumer"

// Config holds the broker settings the state machine follows.
type Config struct {
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms.
	InitialRebalanceDelay time.Duration
	// MinSessionTimeout and MaxSessionTimeout are
	// group.min.session.timeout.ms and group.max.session.timeout.ms.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxSize is group.max.size; 0 means unlimited.
	MaxSize int
	// NewMemberJoinTimeout bounds how long a new member may wait in its
	// first JoinGroup (Kafka: 5 minutes).
	NewMemberJoinTimeout time.Duration
	// NewMemberID returns a fresh member id with the given prefix (the
	// client id, or the instance id of a static member). The default
	// appends a random UUID, as Kafka does.
	NewMemberID func(prefix string) string

	// ConsumerSessionTimeout and ConsumerHeartbeatInterval are
	// group.consumer.session.timeout.ms and
	// group.consumer.heartbeat.interval.ms (KIP-848 groups).
	ConsumerSessionTimeout    time.Duration
	ConsumerHeartbeatInterval time.Duration
	// ConsumerOverrides, if set, returns a group's own
	// consumer.session.timeout.ms and consumer.heartbeat.interval.ms
	// (KIP-848 GROUP configs); a zero duration keeps the default above.
	ConsumerOverrides func(group string) (session, heartbeat time.Duration)
	// ConsumerAssignor is the assignor of a consumer group whose members
	// name none (Kafka: the first of group.consumer.assignors, uniform).
	ConsumerAssignor string
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		InitialRebalanceDelay: 3 * time.Second,
		MinSessionTimeout:     6 * time.Second,
		MaxSessionTimeout:     30 * time.Minute,
		NewMemberJoinTimeout:  5 * time.Minute,
		NewMemberID:           RandomMemberID,

		ConsumerSessionTimeout:    45 * time.Second,
		ConsumerHeartbeatInterval: 5 * time.Second,
		ConsumerAssignor:          UniformAssignor,
	}
}

// RandomMemberID returns prefix + "-" + a random UUID.
func RandomMemberID(prefix string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// Protocol is one protocol a member supports (an assignor name with its
// metadata, for consumers). The bytes are opaque to the coordinator.
type Protocol struct {
	Name     string
	Metadata []byte
}

// Caller identifies a request that waits for its response (JoinGroup,
// SyncGroup). The machine hands it back in a Reply, exactly once.
type Caller any

// JoinRequest is a JoinGroup request.
type JoinRequest struct {
	MemberID         string
	InstanceID       *string
	ClientID         string
	ClientHost       string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	ProtocolType     string
	Protocols        []Protocol
	// RequireKnownMemberID is set from JoinGroup v4: a member without an id
	// gets MEMBER_ID_REQUIRED and must rejoin with the id it is given.
	RequireKnownMemberID bool
	// SupportsSkipAssignment is set from JoinGroup v9 (KIP-814).
	SupportsSkipAssignment bool
	Reason                 string
}

// JoinMember is one member as the leader sees it in its JoinGroup response.
type JoinMember struct {
	MemberID   string
	InstanceID *string
	Metadata   []byte
}

// JoinResult is a JoinGroup response. On error only Err and MemberID are
// meaningful (Generation is -1).
type JoinResult struct {
	Err            *kerr.Error
	MemberID       string
	Generation     int32
	ProtocolType   string
	Protocol       string
	LeaderID       string
	SkipAssignment bool
	Members        []JoinMember // the leader's only
}

// Assignment is one member's assignment in the leader's SyncGroup.
type Assignment struct {
	MemberID   string
	Assignment []byte
}

// SyncRequest is a SyncGroup request.
type SyncRequest struct {
	MemberID     string
	InstanceID   *string
	Generation   int32
	ProtocolType *string // v5+
	Protocol     *string // v5+
	Assignments  []Assignment
}

// SyncResult is a SyncGroup response.
type SyncResult struct {
	Err          *kerr.Error
	ProtocolType string
	Protocol     string
	Assignment   []byte
}

// LeaveMember is one member in a LeaveGroup request. An empty MemberID with
// an InstanceID removes the static member by its instance id (KIP-345).
type LeaveMember struct {
	MemberID   string
	InstanceID *string
}

// Reply is the response to a request that waited.
type Reply struct {
	To   Caller
	Join *JoinResult
	Sync *SyncResult
}

// Effects is what a call asks of its caller: persist Records (in order),
// then deliver Replies.
type Effects struct {
	Replies []Reply
	Records []Record
}

// Merge appends other's effects after e's.
func (e *Effects) Merge(other Effects) {
	e.Replies = append(e.Replies, other.Replies...)
	e.Records = append(e.Records, other.Records...)
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// OffsetAndMetadata is one committed offset.
type OffsetAndMetadata struct {
	Offset          int64
	LeaderEpoch     int32 // -1 if unknown
	Metadata        string
	CommitTimestamp int64 // ms
	ExpireTimestamp int64 // ms; -1 unless the commit (v1–v4) set a retention
}

// CommitOffset is one partition of an OffsetCommit.
type CommitOffset struct {
	TopicPartition
	OffsetAndMetadata
}

// CommitRequest is an OffsetCommit request (partition checks — unknown
// topics, metadata size — are the caller's).
type CommitRequest struct {
	MemberID   string
	InstanceID *string
	Generation int32
	Offsets    []CommitOffset
}

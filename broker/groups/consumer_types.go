package groups

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Types of the next-generation consumer group protocol (KIP-848); see
// consumer_group.go.

// TopicInfo is one topic as the coordinator sees the cluster.
type TopicInfo struct {
	ID         [16]byte
	Name       string
	Partitions int32
	Internal   bool
}

// TopicCatalog is the cluster's topics at the time of a heartbeat, by name
// and by id. The state machine reads it; the caller builds it.
type TopicCatalog struct {
	ByName map[string]TopicInfo
	ByID   map[[16]byte]string
}

// NewTopicCatalog indexes topics.
func NewTopicCatalog(topics []TopicInfo) TopicCatalog {
	c := TopicCatalog{ByName: make(map[string]TopicInfo, len(topics)), ByID: make(map[[16]byte]string, len(topics))}
	for _, t := range topics {
		c.ByName[t.Name] = t
		c.ByID[t.ID] = t.Name
	}
	return c
}

// TopicPartitions is one topic's partitions, named by topic id as the
// ConsumerGroupHeartbeat API names them.
type TopicPartitions struct {
	TopicID    [16]byte
	Topic      string
	Partitions []int32
}

// Member epochs with a meaning of their own in ConsumerGroupHeartbeat.
const (
	JoinEpoch        int32 = 0  // a member (re)joining
	LeaveEpoch       int32 = -1 // a member leaving
	StaticLeaveEpoch int32 = -2 // a static member leaving temporarily
)

// ConsumerHeartbeatRequest is a ConsumerGroupHeartbeat request. Nil fields
// (and RebalanceTimeout < 0) mean "unchanged since the last heartbeat".
type ConsumerHeartbeatRequest struct {
	MemberID             string
	MemberEpoch          int32
	InstanceID           *string
	RackID               *string
	RebalanceTimeout     time.Duration // < 0: unchanged
	SubscribedTopicNames []string      // nil: unchanged
	SubscribedTopicRegex *string       // nil: unchanged
	ServerAssignor       *string       // nil: unchanged
	// Owned is the member's current assignment as it reports it; nil
	// when the heartbeat does not carry it.
	Owned      []TopicPartitions
	ClientID   string
	ClientHost string
}

// ConsumerHeartbeatResult is a ConsumerGroupHeartbeat response.
type ConsumerHeartbeatResult struct {
	Err               *kerr.Error
	ErrMessage        string
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	// Assignment is the member's full assignment; nil when it is not
	// sent (unchanged).
	Assignment []TopicPartitions
}

// ConsumerMemberDescription is one member as ConsumerGroupDescribe shows
// it.
type ConsumerMemberDescription struct {
	MemberID             string
	InstanceID           *string
	RackID               *string
	MemberEpoch          int32
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string
	SubscribedTopicRegex *string
	Assignment           []TopicPartition
	TargetAssignment     []TopicPartition
}

// ConsumerDescription is a consumer group as ConsumerGroupDescribe shows
// it.
type ConsumerDescription struct {
	State           string // Empty, Assigning, Reconciling, Stable
	GroupEpoch      int32
	AssignmentEpoch int32
	Assignor        string
	Members         []ConsumerMemberDescription
}

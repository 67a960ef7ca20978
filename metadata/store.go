package metadata

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
)

// Errors returned by Store implementations.
var (
	ErrTopicExists   = errors.New("metadata: topic already exists")
	ErrTopicNotFound = errors.New("metadata: topic not found")
	// ErrNotEnoughBrokers: fewer live brokers than the replication factor.
	ErrNotEnoughBrokers = errors.New("metadata: not enough live brokers")
)

// TopicID is a topic's 16-byte UUID, as Kafka's Uuid.
type TopicID [16]byte

// NewTopicID returns a random version-4 UUID that is never the zero UUID.
func NewTopicID() TopicID {
	var id TopicID
	for id == (TopicID{}) {
		_, _ = rand.Read(id[:])
		id[6] = (id[6] & 0x0f) | 0x40
		id[8] = (id[8] & 0x3f) | 0x80
	}
	return id
}

// String renders the ID the way Kafka prints Uuids (URL-safe base64, no padding).
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// Topic is the durable description of one topic.
type Topic struct {
	Name string  `json:"name"`
	ID   TopicID `json:"id"`
	// LeaderEpochs holds one leader epoch per partition; len(LeaderEpochs)
	// is the partition count.
	LeaderEpochs []int32 `json:"leader_epochs"`
	// Configs are the topic-level overrides by their Kafka names.
	Configs map[string]string `json:"configs,omitempty"`
	// ReplicationFactor is the replica count of new partitions (0: 1).
	ReplicationFactor int `json:"-"`
	// Assignments, when set, places each new partition on these replicas
	// (first: preferred leader) instead of the balanced plan.
	Assignments [][]int32 `json:"-"`
}

// Partitions returns the partition count.
func (t Topic) Partitions() int32 { return int32(len(t.LeaderEpochs)) }

// Clone returns a deep copy.
func (t Topic) Clone() Topic {
	c := t
	c.LeaderEpochs = append([]int32(nil), t.LeaderEpochs...)
	c.Configs = make(map[string]string, len(t.Configs))
	for k, v := range t.Configs {
		c.Configs[k] = v
	}
	return c
}

// Store is the durable metadata the broker acts on. Every mutating call
// returns only once the change is durable.
type Store interface {
	ClusterID() string
	// Topics returns a copy of every topic.
	Topics() []Topic
	CreateTopic(t Topic) error
	// UpdateTopic replaces the topic with the same name (partition growth,
	// config changes, leader epoch bumps).
	UpdateTopic(t Topic) error
	DeleteTopic(name string) error
	// AllocateProducerIDs reserves n consecutive producer IDs and returns the first.
	AllocateProducerIDs(n int64) (int64, error)
	Close() error
}

package metadata

import (
	"crypto/rand"
	"encoding/base64"
)

// TopicID is a topic's 16-byte UUID, as Kafka's Uuid (the same bytes as
// cluster.TopicID).
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

// Topic is a topic's summary: its name, id, partition count and config
// overrides. It is what the pre-quorum FileStore document kept per topic,
// and the broker's read-only summary of an applied cluster.Topic. Changes
// are never made through it: they are cluster records.
type Topic struct {
	Name string  `json:"name"`
	ID   TopicID `json:"id"`
	// LeaderEpochs holds one leader epoch per partition; len(LeaderEpochs)
	// is the partition count.
	LeaderEpochs []int32 `json:"leader_epochs"`
	// Configs are the topic-level overrides by their Kafka names.
	Configs map[string]string `json:"configs,omitempty"`
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

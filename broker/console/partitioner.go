package console

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// pinnedPartitioner sends a record whose context carries a partition
// (withPartition) there, and any other the way the default partitioner
// would (by key hash, sticky for keyless records).
type pinnedPartitioner struct{ fallback kgo.Partitioner }

type pinnedKey struct{}

// withPartition returns a context that pins a record to partition p.
func withPartition(ctx context.Context, p int32) context.Context {
	return context.WithValue(ctx, pinnedKey{}, p)
}

func pinned(r *kgo.Record) (int32, bool) {
	if r.Context == nil {
		return 0, false
	}
	p, ok := r.Context.Value(pinnedKey{}).(int32)
	return p, ok
}

func (p pinnedPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return pinnedTopicPartitioner{p.fallback.ForTopic(topic)}
}

type pinnedTopicPartitioner struct{ fallback kgo.TopicPartitioner }

func (p pinnedTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	if _, ok := pinned(r); ok {
		return true
	}
	return p.fallback.RequiresConsistency(r)
}

func (p pinnedTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if want, ok := pinned(r); ok {
		return int(want) // out of range fails the record, it is not moved
	}
	return p.fallback.Partition(r, n)
}

// OnNewBatch keeps the fallback's stickiness for keyless records.
func (p pinnedTopicPartitioner) OnNewBatch() {
	if o, ok := p.fallback.(kgo.TopicPartitionerOnNewBatch); ok {
		o.OnNewBatch()
	}
}

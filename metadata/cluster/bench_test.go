package cluster

import (
	"fmt"
	"testing"
)

// BenchmarkApplyHeartbeat measures the state machine's most frequent
// record on a state with 100 topics × 10 partitions.
func BenchmarkApplyHeartbeat(b *testing.B) {
	s := scenarioState(b)
	for i := 0; i < 100; i++ {
		parts := make([]PartitionAssignment, 10)
		for j := range parts {
			parts[j] = PartitionAssignment{Replicas: []int32{1, 2, 3}}
		}
		var err error
		if s, err = Apply(s, CreateTopic{Name: fmt.Sprintf("t%d", i), ID: TopicID{byte(i), 1}, Partitions: parts}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if s, err = Apply(s, BrokerHeartbeat{NodeID: 1, IncarnationID: "a1", TimeMs: int64(2000 + i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFenceBroker measures fencing a broker that is in every ISR of
// 1000 partitions (a copy of every changed topic).
func BenchmarkFenceBroker(b *testing.B) {
	s := scenarioState(b)
	for i := 0; i < 100; i++ {
		parts := make([]PartitionAssignment, 10)
		for j := range parts {
			parts[j] = PartitionAssignment{Replicas: []int32{1, 2, 3}}
		}
		s, _ = Apply(s, CreateTopic{Name: fmt.Sprintf("t%d", i), ID: TopicID{byte(i), 1}, Partitions: parts})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Apply(s, FenceBroker{NodeID: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

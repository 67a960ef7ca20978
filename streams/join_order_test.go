package streams

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func fetchOf(parts ...kgo.FetchTopicPartition) kgo.Fetches {
	var f kgo.Fetch
	for _, p := range parts {
		f.Topics = append(f.Topics, kgo.FetchTopic{Topic: p.Topic, Partitions: []kgo.FetchPartition{p.FetchPartition}})
	}
	return kgo.Fetches{f}
}

func partOf(topic string, partition int32, stamps ...int64) kgo.FetchTopicPartition {
	p := kgo.FetchTopicPartition{Topic: topic, FetchPartition: kgo.FetchPartition{Partition: partition}}
	for i, ms := range stamps {
		p.Records = append(p.Records, &kgo.Record{Topic: topic, Partition: partition, Offset: int64(i), Timestamp: time.UnixMilli(ms)})
	}
	return p
}

// TestEachInTimeOrder: the partitions p of joined topics are interleaved
// by timestamp (each in offset order, ties to the earlier partition in
// the fetch); other partitions and other partition numbers stay apart; an
// error stops the loop and done reports how far each partition got.
func TestEachInTimeOrder(t *testing.T) {
	fetches := fetchOf(
		partOf("clicks", 0, 5, 1, 9), // out of order inside: offsets still rule
		partOf("other", 0, 0),
		partOf("users", 0, 2, 5, 8),
		partOf("users", 1, 0),
		partOf("clicks", 1, 3),
	)
	groups := map[string]string{"clicks": "clicks", "users": "clicks"}
	var order []string
	processed := map[string]int{}
	record := func(p *kgo.FetchTopicPartition, r *kgo.Record) error {
		order = append(order, p.Topic[:1]+string(rune('0'+p.Partition))+"@"+r.Timestamp.Format("05.000")[3:])
		return nil
	}
	done := func(p *kgo.FetchTopicPartition, n int) { processed[p.Topic+string(rune('0'+p.Partition))] = n }
	if err := eachInTimeOrder(fetches, groups, record, done); err != nil {
		t.Fatal(err)
	}
	want := []string{"u0@002", "c0@005", "c0@001", "u0@005", "u0@008", "c0@009", "o0@000", "u1@000", "c1@003"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}

	order, processed = nil, map[string]int{}
	boom := errors.New("boom")
	err := eachInTimeOrder(fetches, groups, func(p *kgo.FetchTopicPartition, r *kgo.Record) error {
		if p.Topic == "users" && r.Offset == 1 {
			return boom
		}
		return record(p, r)
	}, done)
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	wantDone := map[string]int{"clicks0": 2, "users0": 1, "other0": 0, "users1": 0, "clicks1": 0}
	if !reflect.DeepEqual(processed, wantDone) {
		t.Fatalf("processed %v, want %v", processed, wantDone)
	}
}

package broker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topic administration at scale (issue 18): one kadm request creating,
// growing or deleting many topics on a one-node broker. Each iteration
// starts a fresh broker (untimed). Compare a base commit with benchstat:
//
//	go test -run '^$' -bench 'BenchmarkTopicAdmin' -benchtime 1x -count 3 ./broker/

// topicAdmin is a kadm client with timeouts long enough for big requests.
func topicAdmin(b *testing.B, tb *testBroker) *kadm.Client {
	cl := tb.client(kgo.RequestTimeoutOverhead(5 * time.Minute))
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32((5 * time.Minute).Milliseconds()))
	return adm
}

func benchTopicNames(iter, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%d-%05d", iter, i)
	}
	return names
}

func mustCreate(b *testing.B, adm *kadm.Client, partitions int32, names []string) {
	resp, err := adm.CreateTopics(context.Background(), partitions, 1, nil, names...)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range resp {
		if r.Err != nil {
			b.Fatalf("%s: %v (%s)", r.Topic, r.Err, r.ErrMessage)
		}
	}
}

func BenchmarkTopicAdmin(b *testing.B) {
	for _, size := range []struct{ topics, partitions int }{{100, 10}, {1000, 10}, {1, 10000}} {
		b.Run(fmt.Sprintf("Create/%dx%d", size.topics, size.partitions), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				tb := startTestBroker(b)
				adm := topicAdmin(b, tb)
				names := benchTopicNames(i, size.topics)
				b.StartTimer()
				mustCreate(b, adm, int32(size.partitions), names)
				b.StopTimer()
				tb.stop()
			}
			b.ReportMetric(float64(size.topics*b.N)/b.Elapsed().Seconds(), "topics/s")
		})
	}
	b.Run("CreatePartitions/1000x5to10", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tb := startTestBroker(b)
			adm := topicAdmin(b, tb)
			names := benchTopicNames(i, 1000)
			mustCreate(b, adm, 5, names)
			b.StartTimer()
			resp, err := adm.UpdatePartitions(context.Background(), 10, names...)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range resp {
				if r.Err != nil {
					b.Fatalf("%s: %v", r.Topic, r.Err)
				}
			}
			b.StopTimer()
			tb.stop()
		}
	})
	b.Run("Delete/1000x10", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tb := startTestBroker(b)
			adm := topicAdmin(b, tb)
			names := benchTopicNames(i, 1000)
			mustCreate(b, adm, 10, names)
			b.StartTimer()
			resp, err := adm.DeleteTopics(context.Background(), names...)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range resp {
				if r.Err != nil {
					b.Fatalf("%s: %v", r.Topic, r.Err)
				}
			}
			b.StopTimer()
			tb.stop()
		}
	})
}

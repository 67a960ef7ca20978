package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDescribeTopicPartitions: KIP-966's paginated describe (franz-go's
// kmsg, as kcl sends it): every topic in name order, five partitions a
// page, the cursor walking across topic boundaries until every partition
// was seen once; a named unknown topic answers UNKNOWN_TOPIC_OR_PARTITION.
func TestDescribeTopicPartitions(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	cl := tb.client()
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 4, 1, nil, "dtp-a", "dtp-b", "dtp-c"); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]int32{}
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	pages := 0
	for {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		for _, name := range []string{"dtp-c", "dtp-a", "dtp-b"} {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = name
			req.Topics = append(req.Topics, rt)
		}
		req.ResponsePartitionLimit, req.Cursor = 5, cursor
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		n := 0
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 || rt.AuthorizedOperations == 0 {
				t.Fatalf("topic %v: code %d ops %d", rt.Topic, rt.ErrorCode, rt.AuthorizedOperations)
			}
			for _, p := range rt.Partitions {
				if p.LeaderID != tb.srv.cfg.NodeID || len(p.Replicas) != 1 {
					t.Fatalf("%s-%d: %+v", *rt.Topic, p.Partition, p)
				}
				seen[*rt.Topic] = append(seen[*rt.Topic], p.Partition)
				n++
			}
		}
		if n > 5 {
			t.Fatalf("page %d has %d partitions over the limit of 5", pages, n)
		}
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
		if pages > 10 {
			t.Fatal("the cursor does not end")
		}
	}
	if pages != 3 {
		t.Fatalf("%d pages for 12 partitions at 5 a page", pages)
	}
	for _, name := range []string{"dtp-a", "dtp-b", "dtp-c"} {
		if got := seen[name]; len(got) != 4 || got[0] != 0 || got[3] != 3 {
			t.Fatalf("%s: partitions %v", name, got)
		}
	}

	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = "dtp-missing"
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %+v", resp.Topics)
	}
}

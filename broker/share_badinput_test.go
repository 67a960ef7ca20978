package broker

// Share group requests that break the rules get Kafka's error codes and
// change nothing (KIP-932): stale or missing sessions, acknowledgements of
// records not acquired, acquired by another member or out of range,
// malformed batches, stale member epochs.

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/share"
)

func TestShareBadInputErrorCodes(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group = "queue-bad", "workers-bad"
	topicID := tb.createTopic(topic, 1, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
	produceOnePerBatch(t, tb, topic, 1, 5) // offsets 0-4
	ctx := testContext(t)
	cl := tb.client()

	fetch := func(member string, epoch int32, acks ...kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) *kmsg.ShareFetchResponse {
		t.Helper()
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = 1
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr(member), epoch
		req.MaxWaitMillis, req.MaxBytes, req.MaxRecords, req.BatchSize = 100, 1<<20, 100, 100
		p := kmsg.NewShareFetchRequestTopicPartition()
		p.PartitionMaxBytes, p.AcknowledgementBatches = 1<<20, acks
		req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{p}}}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	ack := func(member string, epoch int32, first, last int64, types ...int8) *kmsg.ShareAcknowledgeResponse {
		t.Helper()
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.Version = 1
		req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr(member), epoch
		p := kmsg.NewShareAcknowledgeRequestTopicPartition()
		p.AcknowledgementBatches = []kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{{FirstOffset: first, LastOffset: last, AcknowledgeTypes: types}}
		req.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: topicID, Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{p}}}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	partCode := func(resp *kmsg.ShareAcknowledgeResponse) int16 {
		t.Helper()
		if resp.ErrorCode != 0 {
			return resp.ErrorCode
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("acknowledge response without the partition: %+v", resp)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	want := func(what string, got int16, want *kerr.Error) {
		t.Helper()
		if got != code(want) {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
		}
	}

	// Sessions.
	want("fetch in no session", fetch("m1", 3).ErrorCode, kerr.ShareSessionNotFound)
	want("acknowledge opening a session", ack("m1", 0, 0, 0, 1).ErrorCode, kerr.InvalidShareSessionEpoch)
	want("no member id", fetch("", 0).ErrorCode, kerr.InvalidRequest)
	opened := fetch("m1", 0)
	if opened.ErrorCode != 0 || len(opened.Topics) != 1 || len(opened.Topics[0].Partitions[0].AcquiredRecords) == 0 {
		t.Fatalf("opening fetch: %+v", opened)
	}
	if ar := opened.Topics[0].Partitions[0].AcquiredRecords; ar[0].FirstOffset != 0 || ar[len(ar)-1].LastOffset != 4 {
		t.Fatalf("acquired %+v, want 0-4", ar)
	}
	want("stale session epoch", ack("m1", 5, 0, 0, 1).ErrorCode, kerr.InvalidShareSessionEpoch)
	want("acknowledgements in an opening fetch", fetch("m1", 0, kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{FirstOffset: 0, LastOffset: 0, AcknowledgeTypes: []int8{1}}).ErrorCode, kerr.InvalidRequest)
	// Refused before the session step: m1's session is still at epoch 1.

	// Acknowledgements the member cannot make: nothing changes.
	want("out of range", partCode(ack("m1", 1, 3, 9, 1)), kerr.InvalidRecordState)
	want("first after last", partCode(ack("m1", 2, 3, 2, 1)), kerr.InvalidRequest)
	want("unknown type", partCode(ack("m1", 3, 0, 0, 7)), kerr.InvalidRequest)
	want("renew in v1", partCode(ack("m1", 4, 0, 0, 4)), kerr.InvalidRequest)
	if other := fetch("m2", 0); other.ErrorCode != 0 {
		t.Fatalf("m2 opens a session: %v", other.ErrorCode)
	}
	want("another member's records", partCode(ack("m2", 1, 0, 4, 1)), kerr.InvalidRecordState)
	start, end, lag, _ := sharePartitionState(tb, group, topic, 0)
	if start != 0 || end != 5 || lag != 5 {
		t.Fatalf("state changed by refused acknowledgements: start %d end %d lag %d", start, end, lag)
	}
	// m1 still holds them all: accepting works, twice does not.
	want("accept", partCode(ack("m1", 5, 0, 4, 1)), nil)
	want("accept again", partCode(ack("m1", 6, 0, 4, 1)), kerr.InvalidRecordState)
	if start, _, lag, _ := sharePartitionState(tb, group, topic, 0); start != 5 || lag != 0 {
		t.Fatalf("after accepting: start %d lag %d", start, lag)
	}
	// Closing the session (-1), then using it.
	want("final acknowledge", ack("m1", -1, 0, 0, 1).ErrorCode, nil)
	want("after the close", fetch("m1", 7).ErrorCode, kerr.ShareSessionNotFound)

	// Heartbeats.
	hb := func(member string, epoch int32, topics []string) *kmsg.ShareGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = group, member, epoch, topics
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	joined := hb("h1", 0, []string{topic})
	if joined.ErrorCode != 0 || joined.Assignment == nil || len(joined.Assignment.TopicPartitions) != 1 {
		t.Fatalf("join: %+v", joined)
	}
	want("stale member epoch", hb("h1", joined.MemberEpoch+3, nil).ErrorCode, kerr.FencedMemberEpoch)
	want("unknown member", hb("nobody", 4, nil).ErrorCode, kerr.UnknownMemberID)
	want("join without topics", hb("h2", 0, nil).ErrorCode, kerr.InvalidRequest)
	want("empty group id", func() int16 {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.MemberID = "h1"
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ErrorCode
	}(), kerr.InvalidGroupID)
	// A consumer group's id is not a share group's.
	consumer := tb.client(kgo.ConsumerGroup("classic-bad"), kgo.ConsumeTopics(topic))
	if err := consumer.CommitRecords(ctx, &kgo.Record{Topic: topic, Partition: 0, Offset: 1}); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.SubscribedTopicNames = "classic-bad", "h1", []string{topic}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	want("a consumer group's id", resp.ErrorCode, kerr.GroupIDNotFound)
}

// TestShareSessionEndsWithItsConnection: records a member holds come back
// at once when the connection that opened its share session closes, not
// only when their lock ends.
func TestShareSessionEndsWithItsConnection(t *testing.T) {
	tb := startShareBroker(t)
	const topic, group = "queue-conn", "workers-conn"
	topicID := tb.createTopic(topic, 1, nil)
	setShareGroupConfigs(t, tb, group, map[string]string{"share.auto.offset.reset": "earliest"})
	produceOnePerBatch(t, tb, topic, 1, 3)
	ctx := testContext(t)
	cl := tb.client()
	req := kmsg.NewPtrShareFetchRequest()
	req.Version = 1
	req.GroupID, req.MemberID = kmsg.StringPtr(group), kmsg.StringPtr("m1")
	req.MaxWaitMillis, req.MaxBytes, req.MaxRecords, req.BatchSize = 100, 1<<20, 100, 100
	p := kmsg.NewShareFetchRequestTopicPartition()
	p.PartitionMaxBytes = 1 << 20
	req.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{p}}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].AcquiredRecords) == 0 {
		t.Fatalf("fetch: %+v %v", resp, err)
	}
	acquired := func() int {
		ts := tb.srv.topics.get(topic)
		c := tb.srv.shares
		c.mu.Lock()
		defer c.mu.Unlock()
		sp := c.mu.partitions[sharePartitionKey{group: group, topic: ts.id, partition: 0}]
		n := 0
		for o := int64(0); o < 3; o++ {
			if st, _ := sp.State(o); st == share.Acquired {
				n++
			}
		}
		return n
	}
	if n := acquired(); n != 3 {
		t.Fatalf("%d records acquired, want 3", n)
	}
	cl.Close() // the lock lasts 30 s: only the close can release them
	waitFor(t, 10*time.Second, "records released by the connection's close", func() bool { return acquired() == 0 })
	if st, dc := func() (share.RecordState, int16) {
		ts := tb.srv.topics.get(topic)
		tb.srv.shares.mu.Lock()
		defer tb.srv.shares.mu.Unlock()
		return tb.srv.shares.mu.partitions[sharePartitionKey{group: group, topic: ts.id, partition: 0}].State(0)
	}(); st != share.Available || dc != 1 {
		t.Fatalf("record 0 after the close: %v, delivery count %d", st, dc)
	}
}

package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchSessionKeepsAnsweringErrors: a session partition that stays in
// error is in every incremental response, as Kafka does; leaving it out
// made each long poll return at once and empty, a busy loop.
func TestFetchSessionKeepsAnsweringErrors(t *testing.T) {
	tb := startTestBroker(t)
	id := tb.createTopic("errs", 1, nil)
	c := tb.dialRaw()
	full := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "errs", id, 0, 0, map[int32]int64{0: 100}, nil))
	if full.SessionID == 0 {
		t.Fatal("no session")
	}
	for epoch := int32(1); epoch <= 3; epoch++ {
		resp := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "errs", id, full.SessionID, epoch, map[int32]int64{}, nil))
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("epoch %d: %d topics in the response, want the failing partition", epoch, len(resp.Topics))
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetOutOfRange.Code {
			t.Fatalf("epoch %d: error %v, want OFFSET_OUT_OF_RANGE", epoch, kerr.ErrorForCode(code))
		}
	}
}

// TestFetchSessionTopicRecreated: a v13+ session names topics by ID, so a
// topic deleted and recreated under the same name is a different topic.
func TestFetchSessionTopicRecreated(t *testing.T) {
	tb := startTestBroker(t)
	id := tb.createTopic("again", 1, nil)
	c := tb.dialRaw()
	full := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "again", id, 0, 0, map[int32]int64{0: 0}, nil))
	if _, err := tb.admin().DeleteTopics(testContext(t), "again"); err != nil {
		t.Fatal(err)
	}
	tb.createTopic("again", 1, nil)
	resp := roundTrip[*kmsg.FetchResponse](c, sessionFetch(16, "again", id, full.SessionID, 1, map[int32]int64{}, nil))
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("after recreate: %+v, want UNKNOWN_TOPIC_ID for the old ID", resp.Topics)
	}
}

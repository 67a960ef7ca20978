package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPipelinedRequestsAnsweredInOrder: a client that sends many requests
// without waiting gets the responses in request order, a long-polling
// fetch included (later requests wait behind it, as in Kafka).
func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("pipelined", 1, nil)
	c := tb.dialRaw()
	type sent struct {
		req  kmsg.Request
		corr int32
	}
	var reqs []sent
	batch := buildBatch(t, plainBatch(fixtureRecords(2, 24)...))
	for i := 0; i < 30; i++ {
		var req kmsg.Request
		switch i % 3 {
		case 0:
			req = produceRequest(9, "pipelined", 0, batch)
		case 1:
			req = metadataFor(9, false, "pipelined")
		case 2:
			req = fetchRequest(12, "pipelined", [16]byte{}, map[int32]int64{0: 0}, 1<<20)
		}
		reqs = append(reqs, sent{req, c.send(req)})
	}
	// A fetch that waits, then a request behind it.
	parked := longPoll("pipelined", 0, 300*time.Millisecond, 1<<30)
	reqs = append(reqs, sent{parked, c.send(parked)})
	behind := metadataFor(9, false)
	reqs = append(reqs, sent{behind, c.send(behind)})
	for i, s := range reqs {
		resp, err := c.readResponse(s.req, s.corr, 10*time.Second)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if p, ok := resp.(*kmsg.ProduceResponse); ok {
			if got := p.Topics[0].Partitions[0]; got.ErrorCode != 0 || got.BaseOffset != int64(i/3*2) {
				t.Fatalf("produce %d: %v at %d", i, kerr.ErrorForCode(got.ErrorCode), got.BaseOffset)
			}
		}
	}
}

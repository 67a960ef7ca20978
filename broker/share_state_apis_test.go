package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The share coordinator's state APIs, on one node (its own coordinator):
// a write stores the whole state, a read returns it, and the leader
// epoch fences: a write or read older than the last one seen is
// FENCED_LEADER_EPOCH, a read with a newer one raises it (a deposed
// leader's late write is refused after its successor read the state).
func TestShareGroupStateAPIsFenceLeaderEpochs(t *testing.T) {
	tb := startShareBroker(t)
	ctx := testContext(t)
	cl := tb.client()
	topicID := [16]byte{9, 9, 9}
	writeOnce := func(epoch int32, start int64, batches ...kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch) int16 {
		req := kmsg.NewPtrWriteShareGroupStateRequest()
		req.GroupID = "fenced"
		rt := kmsg.NewWriteShareGroupStateRequestTopic()
		rt.TopicID = topicID
		rp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.StartOffset, rp.StateBatches = 3, epoch, start, batches
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(tb.srv.cfg.NodeID)))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	readOnce := func(epoch int32) kmsg.ReadShareGroupStateResponseTopicPartition {
		req := kmsg.NewPtrReadShareGroupStateRequest()
		req.GroupID = "fenced"
		rt := kmsg.NewReadShareGroupStateRequestTopic()
		rt.TopicID = topicID
		rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = 3, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(tb.srv.cfg.NodeID)))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	loading := func(code int16) bool { // a restarted node's coordinator loads first
		return code == kerr.CoordinatorLoadInProgress.Code || code == kerr.NotCoordinator.Code || code == kerr.CoordinatorNotAvailable.Code
	}
	write := func(epoch int32, start int64, batches ...kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch) (code int16) {
		t.Helper()
		waitFor(t, 10*time.Second, "the share coordinator serving", func() bool {
			code = writeOnce(epoch, start, batches...)
			return !loading(code)
		})
		return code
	}
	read := func(epoch int32) (got kmsg.ReadShareGroupStateResponseTopicPartition) {
		t.Helper()
		waitFor(t, 10*time.Second, "the share coordinator serving", func() bool {
			got = readOnce(epoch)
			return !loading(got.ErrorCode)
		})
		return got
	}
	if got := read(1); got.ErrorCode != 0 || got.StartOffset != -1 {
		t.Fatalf("read before any write: %+v, want start -1", got)
	}
	sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
	sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = 12, 14, 2, 1
	if code := write(5, 10, sb); code != 0 {
		t.Fatalf("write at epoch 5: %v", kerr.ErrorForCode(code))
	}
	if got := read(5); got.ErrorCode != 0 || got.StartOffset != 10 || len(got.StateBatches) != 1 || got.StateBatches[0].FirstOffset != 12 || got.StateBatches[0].DeliveryState != 2 {
		t.Fatalf("read back: %+v", got)
	}
	if code := write(4, 20); code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("write at the older epoch 4: %v, want FENCED_LEADER_EPOCH", kerr.ErrorForCode(code))
	}
	if got := read(7); got.ErrorCode != 0 || got.StartOffset != 10 {
		t.Fatalf("read at the newer epoch 7: %+v", got)
	}
	if code := write(5, 20); code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("write at epoch 5 after a read at 7: %v, want FENCED_LEADER_EPOCH", kerr.ErrorForCode(code))
	}
	if got := read(6); got.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("read at epoch 6 after one at 7: %v, want FENCED_LEADER_EPOCH", kerr.ErrorForCode(got.ErrorCode))
	}
	if code := write(7, 15); code != 0 {
		t.Fatalf("write at epoch 7: %v", kerr.ErrorForCode(code))
	}
	// The epoch survives a restart (it is in the record).
	tb.restart()
	cl = tb.client()
	if code := write(6, 30); code != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("write at epoch 6 after a restart: %v, want FENCED_LEADER_EPOCH", kerr.ErrorForCode(code))
	}
	if got := read(7); got.ErrorCode != 0 || got.StartOffset != 15 || len(got.StateBatches) != 0 {
		t.Fatalf("read after the restart: %+v, want start 15", got)
	}
}

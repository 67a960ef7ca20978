package broker

// DeleteRecords (key 21), v0–v2.
//
//   - Moves the log start offset to the given offset (-1: the high
//     watermark), durably; whole segments below it are deleted. Offsets
//     above the high watermark get OFFSET_OUT_OF_RANGE. The response's low
//     watermark is the new log start offset.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/storage"
)

func init() {
	registerAPI(kmsg.DeleteRecords, 0, 2, handleDeleteRecords)
	checksACLs(kmsg.DeleteRecords)
}

func handleDeleteRecords(rc *requestContext, req *kmsg.DeleteRecordsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		denied := !rc.authorize(acl.OpDelete, acl.ResourceTopic, rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			if denied {
				sp.ErrorCode = rc.countError(kerr.TopicAuthorizationFailed.Code)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p, code := rc.s.topics.leaderPartition(rt.Topic, rp.Partition)
			if p == nil {
				sp.ErrorCode = rc.countError(code)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			offset := rp.Offset
			hw := p.HighWatermark()
			if offset == -1 {
				offset = hw
			}
			if offset < 0 || offset > hw {
				sp.ErrorCode = rc.countError(kerr.OffsetOutOfRange.Code)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			err := p.remote.deleteRecordsBefore(rc.s.ctx, offset)
			if err == nil {
				err = p.DeleteRecordsBefore(offset)
			}
			switch {
			case errors.Is(err, storage.ErrOffsetOutOfRange):
				sp.ErrorCode = rc.countError(kerr.OffsetOutOfRange.Code)
			case err != nil:
				rc.logError("delete records failed", "topic", rt.Topic, "partition", rp.Partition, "err", err)
				sp.ErrorCode = rc.countError(kerr.KafkaStorageError.Code)
			default:
				sp.LowWatermark = p.logStartOffset()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

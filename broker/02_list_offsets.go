package broker

// ListOffsets (key 2), v1–v10.
//
//   - -1 latest: the high watermark (the last stable offset for
//     read_committed: below the oldest open transaction); -2 earliest: the
//     log start offset, the remote log's when it starts earlier; -3 max
//     timestamp (KIP-734): the record with the largest timestamp, local or
//     remote; -4 earliest local (KIP-1005): the local log start; -5 latest
//     tiered (KIP-1005): the last offset in the remote log, -1 when nothing
//     is tiered.
//   - A timestamp >= 0: the first record whose timestamp is at least it
//     (the remote log searched first), or offset -1 when there is none
//     below the high watermark.
//   - While a tiered partition's manifest is not read yet, every query but
//     -1 and -4 answers KAFKA_STORAGE_ERROR (retriable).
//   - current_leader_epoch is checked as in Fetch.

import (
	"context"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
)

func init() {
	registerAPI(kmsg.ListOffsets, 1, 10, handleListOffsets)
	checksACLs(kmsg.ListOffsets)
}

func handleListOffsets(rc *requestContext, req *kmsg.ListOffsetsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			if sp.ErrorCode = rc.topicDenied(acl.OpDescribe, rt.Topic); sp.ErrorCode != 0 {
				sp.Timestamp, sp.Offset = -1, -1
			} else {
				rc.listOffset(&sp, rt.Topic, rp, req.IsolationLevel == 1)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (rc *requestContext) listOffset(sp *kmsg.ListOffsetsResponseTopicPartition, topic string, rp kmsg.ListOffsetsRequestTopicPartition, readCommitted bool) {
	sp.Timestamp, sp.Offset = -1, -1
	p, code := rc.s.topics.leaderPartition(topic, rp.Partition)
	if p == nil {
		sp.ErrorCode = rc.countError(code)
		return
	}
	ours := p.LeaderEpoch()
	if rp.CurrentLeaderEpoch >= 0 && rp.CurrentLeaderEpoch < ours {
		sp.ErrorCode = rc.countError(kerr.FencedLeaderEpoch.Code)
		return
	}
	if rp.CurrentLeaderEpoch > ours {
		sp.ErrorCode = rc.countError(kerr.UnknownLeaderEpoch.Code)
		return
	}
	sp.LeaderEpoch = ours
	if ts := rp.Timestamp; ts != -1 && ts != -4 && p.remote.unavailable() {
		// The answer may lie in the remote log, whose manifest could not be
		// read yet: a retriable error, not an answer that skips it.
		sp.ErrorCode = rc.countError(kerr.KafkaStorageError.Code)
		return
	}
	switch ts := rp.Timestamp; {
	case ts == -1 && readCommitted:
		sp.Offset = p.LastStableOffset()
	case ts == -1:
		sp.Offset = p.HighWatermark()
	case ts == -2:
		sp.Offset = p.logStartOffset()
	case ts == -4: // earliest-local (KIP-1005)
		sp.Offset = p.Log().LogStartOffset()
	case ts == -3:
		offset, timestamp, ok, err := p.Log().MaxTimestamp()
		if err != nil {
			sp.ErrorCode = rc.countError(kerr.KafkaStorageError.Code)
			return
		}
		if m := p.remote.manifest.Load(); m != nil {
			for _, s := range m.Segments {
				if s.NextOffset > m.StartOffset() && s.OffsetOfMaxTimestamp >= 0 && (!ok || s.MaxTimestamp > timestamp ||
					s.MaxTimestamp == timestamp && s.OffsetOfMaxTimestamp < offset) {
					offset, timestamp, ok = s.OffsetOfMaxTimestamp, s.MaxTimestamp, true
				}
			}
		}
		if ok {
			sp.Offset, sp.Timestamp = offset, timestamp
		}
	case ts == -5: // latest-tiered (KIP-1005): the last offset in the remote log
		if _, next, ok := p.remote.readable(); ok {
			sp.Offset = next - 1
		}
	case ts >= 0:
		ctx, cancel := context.WithTimeout(rc.s.ctx, remoteListOffsetsTimeout)
		offset, timestamp, ok, err := p.remote.offsetForTimestamp(ctx, ts, p.Log().LogStartOffset())
		cancel()
		if err == nil && !ok {
			offset, timestamp, ok, err = p.Log().OffsetForTimestamp(ts)
		}
		if err != nil {
			rc.logError("list offsets by timestamp failed", "topic", topic, "partition", rp.Partition, "err", err)
			sp.ErrorCode = rc.countError(kerr.KafkaStorageError.Code)
			return
		}
		if ok && offset < p.HighWatermark() {
			sp.Offset, sp.Timestamp = offset, timestamp
		}
	default:
		sp.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
	}
}

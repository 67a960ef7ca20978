package broker

// ShareFetch (key 78), v1–v2 (v0 was Kafka 4.0's early access): records
// of share groups (KIP-932), on the partition leader.
//
//   - Share sessions: epoch 0 opens the member's session (acknowledgements
//     in it are INVALID_REQUEST), later requests carry the next epoch
//     (INVALID_SHARE_SESSION_EPOCH otherwise, SHARE_SESSION_NOT_FOUND
//     without a session), -1 closes it after its acknowledgements and
//     releases what the member holds. Partitions named join the session,
//     forgotten ones leave it; every fetch reads all of them.
//   - Piggybacked acknowledgements (ACCEPT, RELEASE, REJECT, gaps; RENEW
//     only in a v2 request with IsRenewAck) are applied first, each
//     partition all or nothing, and persisted before the answer; the
//     partition's AcknowledgeErrorCode carries INVALID_RECORD_STATE or
//     INVALID_REQUEST.
//   - Acquisition: from each share-partition's first available record,
//     whole batches (v2 ShareAcquireMode 1, KIP-1206: split at
//     MaxRecords), up to MaxRecords records, MaxBytes bytes and
//     group.share.partition.max.record.locks records in flight, locked
//     for the lock duration (AcquisitionLockTimeoutMillis). The records
//     are read by the same log read as Fetch, from the remote log below
//     the local one; read_committed (share.isolation.level) reads up to
//     the last stable offset and archives aborted batches; control
//     batches are archived.
//   - A session ends with the connection that opened it: what its member
//     holds is released (Kafka's behaviour, which clients rely on).
//   - Long poll: with nothing acquired the request waits up to
//     MaxWaitMillis for appends, released records or a lock's end.

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/share"
)

func init() {
	checksACLs(kmsg.ShareFetch)
	registerOptionalAPI(kmsg.ShareFetch, 1, 2, shareGroupsEnabled, handleShareFetch)
}

// shareAckBatches converts acknowledgement batches of a request.
func shareAckBatches[B any](in []B, conv func(B) share.AckBatch) []share.AckBatch {
	out := make([]share.AckBatch, len(in))
	for i, b := range in {
		out[i] = conv(b)
	}
	return out
}

func handleShareFetch(rc *requestContext, req *kmsg.ShareFetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ShareFetchResponse)
	c := rc.s.shares
	group, member, errCode := rc.shareRequestStart(req.GroupID, req.MemberID)
	if resp.ErrorCode = errCode; errCode != 0 {
		return resp
	}
	settings := c.settings(group)
	resp.AcquisitionLockTimeoutMillis = int32(settings.partition.LockDuration.Milliseconds())

	var named, forgotten []share.TopicPartition
	acks := map[share.TopicPartition][]share.AckBatch{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := share.TopicPartition{TopicID: t.TopicID, Partition: p.Partition}
			named = append(named, tp)
			if len(p.AcknowledgementBatches) > 0 {
				acks[tp] = shareAckBatches(p.AcknowledgementBatches, func(b kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) share.AckBatch {
					return share.AckBatch{First: b.FirstOffset, Last: b.LastOffset, Types: b.AcknowledgeTypes}
				})
			}
		}
	}
	for _, t := range req.ForgottenTopicsData {
		for _, p := range t.Partitions {
			forgotten = append(forgotten, share.TopicPartition{TopicID: t.TopicID, Partition: p})
		}
	}
	if req.ShareSessionEpoch == share.SessionOpenEpoch && len(acks) > 0 {
		resp.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
		resp.ErrorMessage = kmsg.StringPtr("acknowledgements in the request opening a share session")
		return resp
	}
	if req.IsRenewAck && req.MaxRecords > 0 && req.MaxWaitMillis > 0 && len(named) > len(acks) {
		resp.ErrorCode = rc.countError(kerr.InvalidRequest.Code)
		resp.ErrorMessage = kmsg.StringPtr("a renew acknowledgement goes in a ShareFetch without fetching")
		return resp
	}
	sessionParts, sess, err := c.shareSessionStart(group, member, req.ShareSessionEpoch, named, forgotten)
	if err != nil {
		resp.ErrorCode = rc.countError(err.Code)
		return resp
	}
	if req.ShareSessionEpoch == share.SessionOpenEpoch {
		// Ended with the connection; one entry per member (a reopened
		// session replaces its predecessor).
		rc.conn.shareSessions = slices.DeleteFunc(rc.conn.shareSessions, func(o *share.Session) bool {
			return o.Group == sess.Group && o.Member == sess.Member
		})
		rc.conn.shareSessions = append(rc.conn.shareSessions, sess)
	}

	out := newShareFetchOut(resp)
	saves := &shareSaves{}
	for tp, batches := range acks {
		code := c.acknowledge(group, member, rc.resolveShareTarget(tp), batches, req.Version >= 2 && req.IsRenewAck, saves)
		out.partition(tp).AcknowledgeErrorCode = rc.countError(code)
	}
	if err := saves.await(); err != nil {
		rc.logError("share acknowledgements not persisted", "group", group, "err", err)
		for tp := range acks {
			if p := out.partition(tp); p.AcknowledgeErrorCode == 0 {
				p.AcknowledgeErrorCode = rc.countError(kerr.CoordinatorNotAvailable.Code)
			}
		}
	}
	if req.ShareSessionEpoch == share.SessionFinalEpoch {
		c.closeSession(group, member)
		return out.finish()
	}

	maxRecords := int(req.MaxRecords)
	if req.Version < 1 || maxRecords <= 0 {
		maxRecords = 500
	}
	maxBytes := int(req.MaxBytes)
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	targets := make([]shareTarget, len(sessionParts))
	partMax := map[share.TopicPartition]int{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			partMax[share.TopicPartition{TopicID: t.TopicID, Partition: p.Partition}] = int(p.PartitionMaxBytes)
		}
	}
	for i, tp := range sessionParts {
		targets[i] = rc.resolveShareTarget(tp)
		if targets[i].code != 0 {
			out.partition(tp).ErrorCode = rc.countError(targets[i].code)
		}
	}

	deadline := time.Now().Add(time.Duration(req.MaxWaitMillis) * time.Millisecond)
	waiter := make(chan struct{}, 1)
	remote := &remoteFetch{notify: waiter, started: map[*remoteLog]bool{}}
	for {
		changed := c.changedChan()
		acquired, bytes := 0, 0
		var watched []*partition
		var watchedHW []int64
		for _, t := range targets {
			if t.code != 0 || acquired >= maxRecords || bytes >= maxBytes {
				continue
			}
			if pm, ok := partMax[t.tp]; ok && pm == 0 && req.Version >= 1 && acks[t.tp] != nil {
				continue // named for its acknowledgements only
			}
			watched, watchedHW = append(watched, t.p), append(watchedHW, t.p.HighWatermark())
			r := c.acquire(group, member, t, settings, maxRecords-acquired, maxBytes-bytes, req.Version >= 2 && req.ShareAcquireMode == 1, remote)
			if r.code != 0 {
				out.partition(t.tp).ErrorCode = rc.countError(r.code)
				continue
			}
			if len(r.acquired) == 0 {
				continue
			}
			p := out.partition(t.tp)
			p.Records = append(p.Records, r.records...)
			for _, a := range r.acquired {
				ar := kmsg.NewShareFetchResponseTopicPartitionAcquiredRecord()
				ar.FirstOffset, ar.LastOffset, ar.DeliveryCount = a.First, a.Last, a.DeliveryCount
				p.AcquiredRecords = append(p.AcquiredRecords, ar)
				acquired += int(a.Last - a.First + 1)
			}
			bytes += len(r.records)
		}
		now := time.Now()
		if acquired > 0 || out.hasErrors() || !now.Before(deadline) || rc.s.ctx.Err() != nil || len(watched) == 0 {
			return out.finish()
		}
		// Park until an append, a release, a lock's end or the deadline.
		for _, p := range watched {
			p.AddWaiter(waiter)
		}
		moved := false
		for i, p := range watched {
			if p.HighWatermark() != watchedHW[i] {
				moved = true
			}
		}
		if !moved {
			until := deadline
			if next := c.nextLockEnd(group); !next.IsZero() && next.Before(until) {
				until = next
			}
			timer := time.NewTimer(time.Until(until) + time.Millisecond)
			select {
			case <-waiter:
			case <-changed:
			case <-timer.C:
			case <-rc.s.ctx.Done():
			}
			timer.Stop()
		}
		for _, p := range watched {
			p.RemoveWaiter(waiter)
		}
		select {
		case <-waiter:
		default:
		}
	}
}

// shareFetchOut builds a ShareFetch response by partition.
type shareFetchOut struct {
	resp  *kmsg.ShareFetchResponse
	index map[share.TopicPartition]*kmsg.ShareFetchResponseTopicPartition
	order []share.TopicPartition
}

func newShareFetchOut(resp *kmsg.ShareFetchResponse) *shareFetchOut {
	return &shareFetchOut{resp: resp, index: map[share.TopicPartition]*kmsg.ShareFetchResponseTopicPartition{}}
}

func (o *shareFetchOut) partition(tp share.TopicPartition) *kmsg.ShareFetchResponseTopicPartition {
	if p := o.index[tp]; p != nil {
		return p
	}
	p := kmsg.NewShareFetchResponseTopicPartition()
	p.Partition = tp.Partition
	p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = -1, -1
	o.index[tp] = &p
	o.order = append(o.order, tp)
	return &p
}

func (o *shareFetchOut) hasErrors() bool {
	for _, p := range o.index {
		if p.ErrorCode != 0 {
			return true
		}
	}
	return false
}

func (o *shareFetchOut) finish() kmsg.Response {
	byTopic := map[[16]byte]int{}
	for _, tp := range o.order {
		i, ok := byTopic[tp.TopicID]
		if !ok {
			i = len(o.resp.Topics)
			byTopic[tp.TopicID] = i
			t := kmsg.NewShareFetchResponseTopic()
			t.TopicID = tp.TopicID
			o.resp.Topics = append(o.resp.Topics, t)
		}
		o.resp.Topics[i].Partitions = append(o.resp.Topics[i].Partitions, *o.index[tp])
	}
	return o.resp
}

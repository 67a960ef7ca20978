package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/share"
)

// The share-partition leader's persister (KIP-932's Persister): it reads
// and writes share-partition state at the share coordinator, the leader
// of the key's __share_group_state partition. When that is this node, it
// calls the store directly (readLocal, writeLocal); otherwise it sends
// ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState or
// ReadShareGroupStateSummary (the admin side's offsets) to
// the coordinator with the node's inter-broker identity. NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE and network
// errors are retried, the coordinator looked up again each time, with a
// backoff from 25 ms doubling to 1 s, for at most shareStateRetryFor (8 s:
// a share fetch or acknowledgement waits for it, within clients' request
// timeouts); a fenced leader epoch is final.
//
// Writes of one share-partition keep their order and coalesce: queue
// records the latest snapshot under a sequence number; the first waiter
// sends it (no lock held) while later ones wait for a send that covers
// their sequence. Each write is a whole snapshot, so the last one sent
// is the state.
type sharePersister struct {
	s  *Server
	st *shareStateStore
	mu struct {
		sync.Mutex
		writers map[sharePartitionKey]*shareWriter
	}
}

// shareWriter is one share-partition's writes; its fields are guarded by
// the persister's mu.
type shareWriter struct {
	queued      uint64 // sequence of the latest snapshot queued
	snap        share.Snapshot
	leaderEpoch int32
	written     uint64 // sequence the last finished send covered
	err         error  // that send's outcome
	sending     chan struct{}
}

const shareStateRetryFor = 8 * time.Second

func newSharePersister(s *Server, st *shareStateStore) *sharePersister {
	p := &sharePersister{s: s, st: st}
	p.mu.writers = map[sharePartitionKey]*shareWriter{}
	return p
}

// queue records snap as key's state written by the leader of leaderEpoch;
// the returned function waits until it (or a later snapshot) is durable at
// the share coordinator. It takes only the persister's mu: call it under
// the share coordinator's, so snapshots queue in the order of the changes.
func (p *sharePersister) queue(key sharePartitionKey, leaderEpoch int32, snap share.Snapshot) func() error {
	p.mu.Lock()
	w := p.mu.writers[key]
	if w == nil {
		w = &shareWriter{}
		p.mu.writers[key] = w
	}
	w.queued++
	seq := w.queued
	w.snap, w.leaderEpoch = snap, leaderEpoch
	p.mu.Unlock()
	return func() error { return p.await(key, w, seq) }
}

// await waits until a send covering seq ended, sending itself if no one
// is; no lock is held while sending or waiting.
func (p *sharePersister) await(key sharePartitionKey, w *shareWriter, seq uint64) error {
	for {
		p.mu.Lock()
		if w.written >= seq {
			err := w.err
			p.mu.Unlock()
			return err
		}
		if ch := w.sending; ch != nil {
			p.mu.Unlock()
			select {
			case <-ch:
			case <-p.s.ctx.Done():
				return errCoordinatorClosed
			}
			continue
		}
		ch := make(chan struct{})
		w.sending = ch
		snap, epoch, upTo := w.snap, w.leaderEpoch, w.queued
		p.mu.Unlock()
		err := p.write(key, epoch, &snap)
		p.mu.Lock()
		w.sending, w.written, w.err = nil, upTo, err
		if w.written == w.queued && p.mu.writers[key] == w {
			delete(p.mu.writers, key) // idle: every waiter is covered
		}
		p.mu.Unlock()
		close(ch)
	}
}

// retriable reports whether a persister call may succeed at a later try.
func shareStateRetriable(err error) bool {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return !errors.Is(err, errCoordinatorClosed) && !errors.Is(err, context.Canceled)
	}
	return ke == kerr.NotCoordinator || ke == kerr.CoordinatorLoadInProgress || ke == kerr.CoordinatorNotAvailable ||
		ke == kerr.RequestTimedOut || ke == kerr.NotLeaderForPartition
}

// retry runs op until it succeeds, fails for good or shareStateRetryFor
// passes.
func (p *sharePersister) retry(op func() error) error {
	deadline := time.Now().Add(shareStateRetryFor)
	backoff := 25 * time.Millisecond
	for {
		err := op()
		if err == nil || !shareStateRetriable(err) || time.Now().Add(backoff).After(deadline) {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-p.s.ctx.Done():
			t.Stop()
			return errCoordinatorClosed
		}
		backoff = min(2*backoff, time.Second)
	}
}

// coordinatorOf is the node leading key's __share_group_state partition,
// or the error to retry on.
func (p *sharePersister) coordinatorOf(key sharePartitionKey) (int32, error) {
	sh := p.st.shardOf(key)
	if sh == nil {
		return -1, kerr.CoordinatorNotAvailable
	}
	st := p.s.clusterState()
	t, ok := st.Topic(shareStateTopic)
	if !ok || int(sh.index) >= len(t.Partitions) {
		return -1, kerr.CoordinatorNotAvailable
	}
	leader := t.Partitions[sh.index].Leader
	if b, ok := st.Brokers[leader]; !ok || b.Fenced {
		return -1, kerr.CoordinatorNotAvailable
	}
	if leader == p.s.cfg.NodeID {
		// Led here but not (yet) serving: loading.
		return -1, kerr.CoordinatorLoadInProgress
	}
	return leader, nil
}

// request sends req to key's coordinator.
func (p *sharePersister) request(key sharePartitionKey, req kmsg.Request) (kmsg.Response, error) {
	node, err := p.coordinatorOf(key)
	if err != nil {
		return nil, err
	}
	cl, err := p.s.peers.client(node)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(p.s.ctx, 10*time.Second)
	defer cancel()
	resp, err := cl.Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("share state at node %d: %w", node, err)
	}
	return resp, nil
}

// read returns key's state at the share coordinator (ok false: none),
// registering leaderEpoch there so older leaders are fenced.
func (p *sharePersister) read(key sharePartitionKey, leaderEpoch int32) (snap share.Snapshot, ok bool, err error) {
	p.st.ready()
	err = p.retry(func() error {
		s, found, wait, code := p.st.readLocal(key, leaderEpoch)
		if code == nil {
			if wait != nil {
				if err := wait(); err != nil {
					return err
				}
			}
			snap, ok = s, found
			return nil
		}
		if code != kerr.NotCoordinator {
			return code
		}
		req := kmsg.NewPtrReadShareGroupStateRequest()
		req.GroupID = key.group
		rt := kmsg.NewReadShareGroupStateRequestTopic()
		rt.TopicID = key.topic
		rp := kmsg.NewReadShareGroupStateRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = key.partition, leaderEpoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := p.request(key, req)
		if err != nil {
			return err
		}
		resp := kresp.(*kmsg.ReadShareGroupStateResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("broker: ReadShareGroupState answered %d topics", len(resp.Topics))
		}
		part := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
			return err
		}
		snap, ok = share.Snapshot{Start: part.StartOffset}, part.StartOffset >= 0
		for _, b := range part.StateBatches {
			snap.Batches = append(snap.Batches, share.StateBatch{First: b.FirstOffset, Last: b.LastOffset, State: share.RecordState(b.DeliveryState), DeliveryCount: b.DeliveryCount})
		}
		return nil
	})
	return snap, ok, err
}

// summary returns key's start offset and the records from it on that are
// done (-1: the coordinator did not say) at the share coordinator; ok is
// false when it has no state.
func (p *sharePersister) summary(key sharePartitionKey) (start, done int64, ok bool, err error) {
	p.st.ready()
	err = p.retry(func() error {
		s, _, d, found, code := p.st.summaryLocal(key)
		if code == nil {
			start, done, ok = s, d, found
			return nil
		}
		if code != kerr.NotCoordinator {
			return code
		}
		req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
		req.GroupID = key.group
		rt := kmsg.NewReadShareGroupStateSummaryRequestTopic()
		rt.TopicID = key.topic
		rp := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch = key.partition, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kresp, err := p.request(key, req)
		if err != nil {
			return err
		}
		resp := kresp.(*kmsg.ReadShareGroupStateSummaryResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("broker: ReadShareGroupStateSummary answered %d topics", len(resp.Topics))
		}
		part := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
			return err
		}
		start, done, ok = part.StartOffset, int64(part.DeliveryCompleteCount), part.StartOffset >= 0
		return nil
	})
	return start, done, ok, err
}

// write stores snap (nil: deletes) as key's state at the share
// coordinator.
func (p *sharePersister) write(key sharePartitionKey, leaderEpoch int32, snap *share.Snapshot) error {
	p.st.ready()
	return p.retry(func() error {
		wait, code := p.st.writeLocal(key, leaderEpoch, snap)
		if code == nil {
			return wait()
		}
		if code != kerr.NotCoordinator {
			return code
		}
		var kresp kmsg.Response
		var err error
		if snap == nil {
			req := kmsg.NewPtrDeleteShareGroupStateRequest()
			req.GroupID = key.group
			rt := kmsg.NewDeleteShareGroupStateRequestTopic()
			rt.TopicID = key.topic
			rp := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
			rp.Partition = key.partition
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			if kresp, err = p.request(key, req); err != nil {
				return err
			}
			resp := kresp.(*kmsg.DeleteShareGroupStateResponse)
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				return fmt.Errorf("broker: DeleteShareGroupState answered %d topics", len(resp.Topics))
			}
			return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
		}
		req := kmsg.NewPtrWriteShareGroupStateRequest()
		req.GroupID = key.group
		rt := kmsg.NewWriteShareGroupStateRequestTopic()
		rt.TopicID = key.topic
		rp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.StartOffset = key.partition, leaderEpoch, snap.Start
		for _, b := range snap.Batches {
			sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
			sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.First, b.Last, int8(b.State), b.DeliveryCount
			rp.StateBatches = append(rp.StateBatches, sb)
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		if kresp, err = p.request(key, req); err != nil {
			return err
		}
		resp := kresp.(*kmsg.WriteShareGroupStateResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return fmt.Errorf("broker: WriteShareGroupState answered %d topics", len(resp.Topics))
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	})
}

// forget deletes the state of keys (their group or offsets were deleted)
// at their coordinators, after the writes queued for them.
func (p *sharePersister) forget(keys []sharePartitionKey) {
	for _, key := range keys {
		p.mu.Lock()
		w := p.mu.writers[key]
		var seq uint64
		if w != nil {
			seq = w.queued
		}
		p.mu.Unlock()
		if w != nil {
			_ = p.await(key, w, seq) // the tombstone goes after them
		}
		if err := p.write(key, -1, nil); err != nil {
			p.s.logger.Warn("share-partition state not deleted", "group", key.group, "partition", key.partition, "err", err)
		}
	}
}

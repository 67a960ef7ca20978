package broker

// Produce (key 0), v3–v13 (record batch v2 only; v12 is v11 on the wire;
// v13 names topics by id only, KIP-516).
//
//   - v13: an id this node does not know (a topic deleted, perhaps created
//     again under its name with a new id) is UNKNOWN_TOPIC_ID, as in Kafka
//     4.x; Metadata names the new id. Kafka's Java producer refreshes and
//     resends with it; franz-go (v1.22) deliberately does not adopt a
//     recreated topic's id: its records fail with UNKNOWN_TOPIC_ID until
//     the application calls PurgeTopicsFromClient, after which it produces
//     to the new topic (TestProduceV13RecreatedTopic).
//   - Each partition's records are validated (magic 2, lengths, CRC-32C) and
//     appended exactly as sent; only baseOffset and partitionLeaderEpoch are
//     rewritten. No decompression, unless the topic's compression.type
//     names a codec: batches in another codec are then recompressed with it
//     (recompress.go). A decompressed batch may inflate to 16 ×
//     max.message.bytes, at least 1 MiB (MESSAGE_TOO_LARGE beyond;
//     CORRUPT_MESSAGE if it does not decode).
//   - Records that break a topic rule fail the whole batch and are named by
//     index in record_errors (v8+, KIP-467) with error_message: a key-less
//     record on a compacted topic (INVALID_RECORD), a CreateTime timestamp
//     outside message.timestamp.before.max.ms / after.max.ms
//     (INVALID_TIMESTAMP, which wins if both occur). Clients fail those
//     records and report the rest with their own error (librdkafka:
//     _INVALID_DIFFERENT_RECORD).
//   - CORRUPT_MESSAGE for a bad batch, MESSAGE_TOO_LARGE over the topic's
//     max.message.bytes, UNKNOWN_TOPIC_OR_PARTITION for a missing topic or
//     partition (produce never auto-creates; Metadata does, as in Kafka),
//     INVALID_TOPIC_EXCEPTION for an illegal name, and for internal topics
//     (__consumer_offsets) unless the client id is Kafka's "__admin_client".
//   - Idempotent batches are checked per producer id (broker/replica/producers.go);
//     a retried batch is acknowledged with its original offsets.
//   - Transactional batches need the request's transactional id
//     (INVALID_TXN_STATE otherwise); they open the producer's transaction on
//     the partition until the coordinator's marker (txn_coordinator.go). The
//     batch that opens it is verified first (KIP-890 part 1): the partition
//     must be in the producer's ongoing transaction at the coordinator, or
//     the produce fails with INVALID_TXN_STATE — a late batch of an aborted
//     or timed-out transaction can no longer leave a transaction open that
//     no marker will ever close (the "hanging transaction" that blocks
//     read_committed consumers in Kafka before 3.6).
//   - acks=0 gets no response; if any partition failed the connection is
//     closed instead, as Kafka does, so the producer notices. acks=-1
//     refuses a partition whose ISR is below min.insync.replicas
//     (NOT_ENOUGH_REPLICAS), then waits until the ISR has the batch
//     (REQUEST_TIMED_OUT past the request's timeout;
//     NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank meanwhile).
//   - NOT_LEADER_OR_FOLLOWER carries the applied leader and its endpoint
//     (v10+, KIP-951; leader_hints.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/broker/txn"
	"github.com/strata-streaming/strata/metadata"
)

func init() {
	registerAPI(kmsg.Produce, 3, 13, handleProduce)
	checksACLs(kmsg.Produce)
}

func handleProduce(rc *requestContext, req *kmsg.ProduceRequest) kmsg.Response {
	resp := produceAll(rc, req)
	if req.Acks == 0 {
		rc.noResponse = true
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					rc.closeAfter = "acks=0 produce failed: " + kerr.ErrorForCode(p.ErrorCode).Error()
				}
			}
		}
	}
	return resp
}

func produceAll(rc *requestContext, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	var waits []*pendingAck
	names := make([]string, 0, len(req.Topics)) // the topic of each resp.Topics entry
	// WRITE on the transactional id, then on each topic (authorize.go).
	txnDenied := req.TransactionID != nil && !rc.authorize(acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionID)
	for ti, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		name := rt.Topic
		var topic *topicState
		denied := int16(0)
		if req.Version >= 13 {
			// KIP-516: v13 names topics by id only.
			st.TopicID = rt.TopicID
			if topic = rc.s.topics.getByID(metadata.TopicID(rt.TopicID)); topic == nil {
				denied = kerr.UnknownTopicID.Code
			} else {
				name = topic.name
			}
		} else {
			topic = rc.s.topics.get(name)
		}
		switch {
		case denied != 0:
		case txnDenied:
			denied = kerr.TransactionalIDAuthorizationFailed.Code
		case !rc.authorize(acl.OpWrite, acl.ResourceTopic, name):
			denied = kerr.TopicAuthorizationFailed.Code
		}
		for pi, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			if denied != 0 {
				sp.ErrorCode = rc.countError(denied)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			var wait *pendingAck
			rc.produceOne(&sp, topic, name, rp, req.Acks, req.TransactionID, &wait)
			if wait != nil {
				wait.topic, wait.partition = ti, pi
				waits = append(waits, wait)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
		if topic != nil {
			names = append(names, name)
		} else {
			names = append(names, "")
		}
	}
	if len(waits) > 0 {
		rc.awaitAcks(resp, waits, time.Duration(req.TimeoutMillis)*time.Millisecond)
	}
	rc.addProduceLeaderHints(req.Version, resp, names)
	return resp
}

// roleWait bounds how long a produce waits for this node to take a
// leadership it has applied.
const roleWait = 500 * time.Millisecond

// appliedLeader is the leader of topic/partition in the applied metadata,
// -1 if unknown.
func (s *Server) appliedLeader(topic string, partition int32) int32 {
	t, ok := s.clusterState().Topic(topic)
	if !ok || partition < 0 || int(partition) >= len(t.Partitions) {
		return -1
	}
	return t.Partitions[partition].Leader
}

// pendingAck is an acks=all append waiting for the ISR.
type pendingAck struct {
	topic, partition int // response positions
	p                *partition
	last             int64
	epoch            int32 // the leader epoch of the append
	minISR           int64
}

// awaitAcks waits, within the request's timeout, until the high watermark
// of each partition passes its batch. A batch not replicated in time gets
// REQUEST_TIMED_OUT; one whose leader moved, NOT_LEADER_OR_FOLLOWER (the
// records may or may not survive: the producer retries); one committed
// while the ISR had shrunk below min.insync.replicas,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND (Kafka's answers).
func (rc *requestContext) awaitAcks(resp *kmsg.ProduceResponse, waits []*pendingAck, timeout time.Duration) {
	// One wait context for the request, made only if some partition is
	// not replicated yet.
	var ctx context.Context
	deadline := time.Now().Add(timeout)
	for _, w := range waits {
		sp := &resp.Topics[w.topic].Partitions[w.partition]
		done, err := w.p.Replicated(w.last, w.epoch)
		if !done && err == nil {
			if ctx == nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(rc.s.ctx, deadline)
				defer cancel()
			}
			waitStart := time.Now()
			err = w.p.AwaitReplicated(ctx, w.last, w.epoch)
			rc.waited += time.Since(waitStart)
		}
		code := int16(0)
		switch {
		case errors.Is(err, replica.ErrReplicationTimeout):
			code = kerr.RequestTimedOut.Code
		case err != nil, !w.p.IsLeader():
			// No longer the leader (or the partition closed, its topic
			// deleted) while the records replicated.
			code = kerr.NotLeaderForPartition.Code
		case int64(len(w.p.Role().ISR)) < w.minISR:
			code = kerr.NotEnoughReplicasAfterAppend.Code
		}
		if code != 0 {
			sp.ErrorCode = rc.countError(code)
			sp.BaseOffset = -1
		}
	}
}

func (rc *requestContext) produceOne(sp *kmsg.ProduceResponseTopicPartition, topic *topicState, name string, rp kmsg.ProduceRequestTopicPartition, acks int16, transactionalID *string, wait **pendingAck) {
	fail := func(code int16, msg string) {
		sp.ErrorCode = rc.countError(code)
		if msg != "" {
			sp.ErrorMessage = &msg
		}
	}
	if topic == nil {
		if err := validateTopicName(name); err != nil {
			fail(kerr.InvalidTopicException.Code, err.Error())
			return
		}
		fail(kerr.UnknownTopicOrPartition.Code, "")
		return
	}
	if isInternalTopic(name) && rc.header.clientID != adminClientID {
		// Only the broker writes __consumer_offsets (Kafka's rule).
		fail(kerr.InvalidTopicException.Code, "cannot append to internal topic "+name)
		return
	}
	if rp.Partition < 0 || rp.Partition >= topic.meta.Partitions() {
		fail(kerr.UnknownTopicOrPartition.Code, "")
		return
	}
	p := rc.s.topics.partition(name, rp.Partition)
	if p != nil && p.topic == topic && rc.s.partitionOffline(p) {
		fail(kerr.KafkaStorageError.Code, "the partition's log directory is offline")
		return
	}
	if p != nil && p.topic == topic && !p.IsLeader() && rc.s.appliedLeader(name, rp.Partition) == rc.s.cfg.NodeID {
		// Leader in the applied metadata, the role not taken yet (reconcile
		// runs after each batch of records): a producer told of the new
		// leader by another node is not sent away.
		ctx, cancel := context.WithTimeout(rc.s.ctx, roleWait)
		_ = rc.s.meta.waitReconciled(ctx, p.IsLeader)
		cancel()
	}
	if p == nil || p.topic != topic || !p.IsLeader() {
		fail(kerr.NotLeaderForPartition.Code, "")
		return
	}
	cfg := rc.s.topics.topicConfig(topic)
	role := p.Role()
	if role.Leader != rc.s.cfg.NodeID {
		// It stopped leading (or closed: its topic deleted) just now.
		fail(kerr.NotLeaderForPartition.Code, "")
		return
	}
	if isr := len(role.ISR); acks == -1 && int64(isr) < int64(cfg.minInsyncReplicas()) {
		fail(kerr.NotEnoughReplicas.Code, fmt.Sprintf("the in-sync replica set has %d members; min.insync.replicas is %d", isr, cfg.minInsyncReplicas()))
		return
	}
	if acks != 0 && acks != 1 && acks != -1 {
		fail(kerr.InvalidRequiredAcks.Code, "")
		return
	}
	if transactionalID == nil && len(rp.Records) >= storage.BatchHeaderSize {
		// Transactional batches come only with a transactional id.
		if h, err := storage.ParseBatchHeader(rp.Records); err == nil && h.IsTransactional() {
			fail(kerr.InvalidTxnState.Code, "transactional records in a produce request without a transactional id")
			return
		}
	}
	b, res := p.prepareAppend(rp.Records, cfg, rc.s.schemaValidatorNow())
	if res.Code == 0 {
		var opts replica.AppendOptions
		if transactionalID != nil {
			opts.VerifyTxn = rc.txnVerifier(name, p.index, *transactionalID)
		}
		res = p.Append(rc.s.ctx, b, opts)
	}
	if res.Code != 0 {
		rc.s.storageFailed(p, res.Err)
		fail(res.Code, res.Message)
		for _, v := range res.RecordErrors { // v8+ (KIP-467); not encoded below v8
			re := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			re.RelativeOffset = v.Index
			re.ErrorMessage = &v.Message
			sp.ErrorRecords = append(sp.ErrorRecords, re)
		}
		return
	}
	if acks == -1 {
		// acks=all: the answer waits until the whole ISR has the batch.
		*wait = &pendingAck{p: p, last: res.LastOffset, epoch: res.LeaderEpoch, minISR: cfg.minInsyncReplicas()}
	}
	sp.BaseOffset = res.BaseOffset
	sp.LogAppendTime = res.LogAppendTime
	sp.LogStartOffset = p.logStartOffset()
	if !res.Duplicate {
		rc.s.metrics.bytesIn.WithLabelValues(name).Add(float64(len(rp.Records)))
		p.traffic.bytesIn.Add(int64(len(rp.Records)))
		rc.s.metrics.recordsIn.WithLabelValues(name).Add(float64(res.LastOffset - res.BaseOffset + 1))
	}
}

// txnVerifier is the KIP-890 check of a transactional batch that would
// open its producer's transaction on a partition (replica.AppendOptions):
// this node's coordinator must have the partition in the producer's
// ongoing transaction. It runs with no lock of the partition held, and
// takes the coordinator shard's mu only for the check itself.
//
// A marker that ends the transaction between this answer and the append
// must still not let the batch open a transaction nobody will close. The
// producer state alone does not prevent it: a marker of the same epoch
// (EndTxn) leaves the producer at that epoch with no transaction open and
// its sequences intact, so the late batch would pass the epoch and
// sequence checks. So, as Kafka's VerificationGuard does, the replica
// counts the producer's markers from before this check to the append and
// refuses the batch (INVALID_TXN_STATE) if one was written. Why that
// suffices: the coordinator writes a transaction's markers only after its
// Prepare state was applied under the shard's mu. If this check saw the
// partition in an Ongoing transaction, it ran before that Prepare, so
// every marker of that transaction is counted. If it ran after the
// Prepare, it answers CONCURRENT_TRANSACTIONS (or, once completed, not
// Ongoing: TRANSACTION_ABORTABLE), and nothing is appended.
func (rc *requestContext) txnVerifier(topic string, partition int32, transactionalID string) func(context.Context, int64, int16) *kerr.Error {
	return func(_ context.Context, producerID int64, epoch int16) *kerr.Error {
		sh, failed := rc.s.txns.shardFor(transactionalID)
		if failed == kerr.NotCoordinator {
			// Another node coordinates this transaction: append unverified
			// (KIP-890's check needs the coordinator's answer, which a
			// multi-node cluster does not fetch yet).
			return nil
		}
		if failed != nil {
			return failed
		}
		sh.mu.Lock()
		if sh.coord == nil {
			sh.mu.Unlock()
			return nil // moved meanwhile, as above
		}
		results := sh.coord.VerifyPartitions(txn.AddPartitionsRequest{
			TransactionalID: transactionalID, ProducerID: producerID, ProducerEpoch: epoch,
			Partitions: []txn.TopicPartition{{Topic: topic, Partition: partition}},
		})
		sh.mu.Unlock()
		if len(results) == 1 && results[0].Err != nil {
			if results[0].Err == kerr.TransactionAbortable {
				return kerr.InvalidTxnState
			}
			return results[0].Err
		}
		if hook := rc.s.txns.verifiedHook.Load(); hook != nil {
			(*hook)()
		}
		return nil
	}
}

package broker

// WriteTxnMarkers (key 27): a transaction coordinator on another node asks
// this node to write COMMIT or ABORT markers on partitions it leads, as
// Kafka's coordinators do between brokers.
//   - Each marker is appended like the local coordinator's (same producer
//     epoch check, aborted-transaction index, last stable offset) and the
//     answer waits until the ISR has it, so a decided transaction is never
//     left open on a partition by a failover.
//   - A partition this node does not lead gets NOT_LEADER_OR_FOLLOWER; the
//     coordinator retries at the new leader.
//   - On a __consumer_offsets partition the groups then settle the
//     transaction's offsets.
//   - A marker and a first transactional batch of the same producer that
//     this node's coordinator verified (KIP-890) are ordered by the
//     partition: a batch verified before the marker but not yet appended
//     is refused (replica.Append; txnVerifier in 00_produce.go).
//   - A marker whose coordinator epoch is older than the last one written
//     here for the producer is refused with TRANSACTION_COORDINATOR_FENCED
//     and not appended (Kafka's ProducerStateManager check, in the
//     replica's producer state, kept in its snapshot and rebuilt from the
//     markers in the log): it comes from a coordinator load that was
//     replaced and may be arriving after the producer's next transaction
//     started.
//
// The local coordinator's marker tasks (txn_coordinator.go, finishTxn)
// write local partitions through writeMarkerReplicated and the others'
// through sendMarkers, one request per leader, in parallel; none of them
// holds a coordinator lock.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/txn"
)

func init() {
	registerAPI(kmsg.WriteTxnMarkers, 0, 1, handleWriteTxnMarkers)
	checksACLs(kmsg.WriteTxnMarkers)
}

func handleWriteTxnMarkers(rc *requestContext, req *kmsg.WriteTxnMarkersRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	denied := !rc.authorizeCluster(acl.OpClusterAction) // brokers only
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, part := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = part
				if denied {
					rp.ErrorCode = rc.countError(kerr.ClusterAuthorizationFailed.Code)
				} else {
					rp.ErrorCode = rc.countError(rc.s.writeMarkerReplicated(t.Topic, part, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch))
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

// writeMarkerReplicated writes one marker on a partition this node leads
// and waits until the ISR has it; it returns a Kafka error code (0: done).
func (s *Server) writeMarkerReplicated(topic string, partition int32, producerID int64, epoch int16, commit bool, coordinatorEpoch int32) int16 {
	p, code := s.topics.leaderPartition(topic, partition)
	if p == nil {
		if code == kerr.UnknownTopicOrPartition.Code {
			return 0 // deleted meanwhile: nothing to mark
		}
		return code
	}
	log := &partitionLog{s: s, p: p}
	offset, leaderEpoch, err := log.writeMarker(producerID, epoch, commit, coordinatorEpoch)
	switch {
	case errors.Is(err, replica.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code
	case errors.Is(err, kerr.InvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, kerr.TransactionCoordinatorFenced):
		s.logger.Info("refusing a transaction marker of a deposed coordinator", "topic", topic, "partition", partition,
			"producer_id", producerID, "coordinator_epoch", coordinatorEpoch, "err", err)
		return kerr.TransactionCoordinatorFenced.Code
	case err != nil:
		s.logger.Error("writing a transaction marker", "topic", topic, "partition", partition, "err", err)
		return kerr.KafkaStorageError.Code
	}
	if topic == consumerOffsetsTopic && s.groups != nil {
		s.groups.completeTxnOffsets(partition, producerID, commit)
	}
	switch err := log.awaitReplicated(offset, leaderEpoch); {
	case errors.Is(err, replica.ErrReplicationTimeout):
		return kerr.RequestTimedOut.Code
	case err != nil:
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// sendMarkers asks another node to write a transaction's markers on the
// partitions it leads.
func (s *Server) sendMarkers(leader int32, m txn.Markers, tps []txn.TopicPartition) error {
	if leader < 0 {
		return fmt.Errorf("markers of %s: a partition has no leader", m.TransactionalID)
	}
	cl, err := s.peers.client(leader)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	rm := kmsg.NewWriteTxnMarkersRequestMarker()
	rm.ProducerID, rm.ProducerEpoch, rm.Committed, rm.CoordinatorEpoch = m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch
	index := map[string]int{}
	for _, tp := range tps {
		i, ok := index[tp.Topic]
		if !ok {
			i = len(rm.Topics)
			index[tp.Topic] = i
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic = tp.Topic
			rm.Topics = append(rm.Topics, t)
		}
		rm.Topics[i].Partitions = append(rm.Topics[i].Partitions, tp.Partition)
	}
	req.Markers = append(req.Markers, rm)
	ctx, cancel := context.WithTimeout(s.ctx, 35*time.Second)
	defer cancel()
	kresp, err := cl.Request(ctx, req)
	if err != nil {
		return fmt.Errorf("markers of %s to node %d: %w", m.TransactionalID, leader, err)
	}
	resp := kresp.(*kmsg.WriteTxnMarkersResponse)
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return fmt.Errorf("marker for %s-%d at node %d: %w", rt.Topic, rp.Partition, leader, err)
				}
			}
		}
	}
	return nil
}

// peerClients are franz-go clients to the other nodes, one per node
// address, for the broker's own requests (transaction markers). mu guards
// the map; no client is dialled or closed under it.
// peerClientID is the client id of peerClients' requests: a request
// another node forwarded (forwardToQuorumLeader) is not forwarded again.
const peerClientID = "strata-broker"

type peerClients struct {
	s      *Server
	mu     sync.Mutex
	m      map[int32]*peerClient
	closed bool
}

type peerClient struct {
	addr string
	cl   *kgo.Client
}

// client returns a client bound to the node's current address, whose
// Request goes to that node.
func (pc *peerClients) client(id int32) (*kgo.Broker, error) {
	b, ok := pc.s.clusterState().Brokers[id]
	if !ok {
		return nil, fmt.Errorf("broker: node %d is not registered", id)
	}
	pc.mu.Lock()
	if pc.closed {
		pc.mu.Unlock()
		return nil, errors.New("broker: shutting down")
	}
	if pc.m == nil {
		pc.m = map[int32]*peerClient{}
	}
	var stale *kgo.Client
	c := pc.m[id]
	if c == nil || c.addr != b.Addr {
		if c != nil {
			stale = c.cl
		}
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr), kgo.ClientID(peerClientID), kgo.DialTimeout(2 * time.Second)}, pc.s.interBrokerOpts()...)...)
		if err != nil {
			pc.mu.Unlock()
			return nil, err
		}
		c = &peerClient{addr: b.Addr, cl: cl}
		pc.m[id] = c
	}
	cl := c.cl
	pc.mu.Unlock()
	if stale != nil {
		stale.Close() // waits for its requests to end: not under mu
	}
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("broker: no connection to node %d", id)
	}
	return seeds[0], nil
}

func (pc *peerClients) close() {
	pc.mu.Lock()
	clients := pc.m
	pc.m = nil
	pc.closed = true
	pc.mu.Unlock()
	for _, c := range clients {
		c.cl.Close()
	}
}

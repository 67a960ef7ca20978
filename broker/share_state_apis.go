package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata"
)

// What the share coordinator's inter-broker APIs (83–87: Initialize-,
// Read-, Write- and DeleteShareGroupState, ReadShareGroupStateSummary)
// share: only brokers may call them (CLUSTER_ACTION on the cluster, as
// in Kafka), each partition is answered by the leader of its key's
// __share_group_state partition (NOT_COORDINATOR elsewhere,
// COORDINATOR_LOAD_IN_PROGRESS while it loads), and writes are answered
// once durable.

// shareStateCall runs one partition of a share coordinator request: op
// returns its error and, for a write, what to wait for.
type shareStateCall struct {
	rc      *requestContext
	denied  bool
	pending []shareStatePending
}

type shareStatePending struct {
	code *int16
	wait func() error
}

func (rc *requestContext) shareStateCall() *shareStateCall {
	rc.s.shares.state.ready()
	return &shareStateCall{rc: rc, denied: !rc.authorizeCluster(acl.OpClusterAction)}
}

// run sets *code from op for the partition of key.
func (sc *shareStateCall) run(code *int16, op func() (func() error, *kerr.Error)) {
	if sc.denied {
		*code = sc.rc.countError(kerr.ClusterAuthorizationFailed.Code)
		return
	}
	wait, err := op()
	if err != nil {
		*code = sc.rc.countError(err.Code)
		return
	}
	if wait != nil {
		sc.pending = append(sc.pending, shareStatePending{code: code, wait: wait})
	}
}

// finish waits for the writes, with no lock held; a write that did not
// become durable answers COORDINATOR_NOT_AVAILABLE (the caller retries).
func (sc *shareStateCall) finish() {
	for _, p := range sc.pending {
		if err := p.wait(); err != nil {
			sc.rc.s.logger.Warn("share state write not durable", "err", err)
			*p.code = sc.rc.countError(kerr.CoordinatorNotAvailable.Code)
		}
	}
}

func shareKey(group string, topic [16]byte, partition int32) sharePartitionKey {
	return sharePartitionKey{group: group, topic: metadata.TopicID(topic), partition: partition}
}

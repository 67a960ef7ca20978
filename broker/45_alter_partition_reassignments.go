package broker

// AlterPartitionReassignments (key 45), v0 (KIP-455).
//
//   - A partition with replicas starts (or replaces) a reassignment to
//     them; null replicas cancel the one in progress
//     (NO_REASSIGNMENT_IN_PROGRESS if there is none). Any node commits the
//     change through the metadata quorum (cluster.ReassignPartition); the
//     nodes then follow the applied state: new replicas catch up, join the
//     ISR, and the state machine completes the move.
//   - UNKNOWN_TOPIC_OR_PARTITION; INVALID_REPLICA_ASSIGNMENT (empty list,
//     duplicate or unregistered broker ids) with a message; a partition
//     named twice in one request: INVALID_REQUEST.
//   - The request's timeout_ms bounds the quorum round trips: what is not
//     applied by then gets REQUEST_TIMED_OUT (the change may still commit).
//   - The top-level error is set only when the whole request failed: this
//     node's metadata quorum client is closed (NOT_CONTROLLER, so the
//     client retries elsewhere).
//   - No authorization: like every admin request here.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/metadata"
	"github.com/strata-streaming/strata/metadata/cluster"
)

func init() {
	registerAPI(kmsg.AlterPartitionAssignments, 0, 0, handleAlterPartitionAssignments)
}

const (
	// reassignDefaultTimeout bounds a request that names no timeout.
	reassignDefaultTimeout = 30 * time.Second
	// reassignParallelism is how many proposals one request has in flight.
	reassignParallelism = 8
)

// reassignOutcome is the result for one partition of the request.
type reassignOutcome struct {
	code    int16
	message string
	// requestWide marks a failure of the whole node, not of the partition.
	requestWide bool
}

func handleAlterPartitionAssignments(rc *requestContext, req *kmsg.AlterPartitionAssignmentsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	timeout := time.Duration(req.TimeoutMillis) * time.Millisecond
	if timeout <= 0 {
		timeout = reassignDefaultTimeout
	}
	ctx, cancel := context.WithTimeout(rc.s.ctx, timeout)
	defer cancel()

	type job struct {
		topic, part int // indexes into resp.Topics[topic].Partitions[part]
		rec         cluster.ReassignPartition
	}
	type key struct {
		topic     string
		partition int32
	}
	seen := map[key]int{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			seen[key{rt.Topic, rp.Partition}]++
		}
	}
	var (
		jobs     []job
		outcomes [][]reassignOutcome
	)
	st := rc.s.clusterState()
	for ti, rt := range req.Topics {
		outcomes = append(outcomes, make([]reassignOutcome, len(rt.Partitions)))
		for pi, rp := range rt.Partitions {
			if seen[key{rt.Topic, rp.Partition}] > 1 {
				outcomes[ti][pi] = reassignOutcome{code: kerr.InvalidRequest.Code, message: "partition named more than once in the request"}
				continue
			}
			if o, bad := checkReassignment(st, rt.Topic, rp.Partition, rp.Replicas); bad {
				outcomes[ti][pi] = o
				continue
			}
			rec := cluster.ReassignPartition{Topic: rt.Topic, Partition: rp.Partition, Target: slices.Clone(rp.Replicas)}
			jobs = append(jobs, job{topic: ti, part: pi, rec: rec})
		}
	}

	// Proposals of distinct partitions are independent: run a few at once.
	var wg sync.WaitGroup
	sem := make(chan struct{}, reassignParallelism)
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := rc.s.meta.reassignPartition(ctx, j.rec)
			outcomes[j.topic][j.part] = reassignResult(j.rec, err)
		}()
	}
	wg.Wait()

	for ti, rt := range req.Topics {
		out := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		out.Topic = rt.Topic
		for pi, rp := range rt.Partitions {
			o := outcomes[ti][pi]
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = rp.Partition
			if o.code != 0 {
				sp.ErrorCode = rc.countError(o.code)
				msg := o.message
				sp.ErrorMessage = &msg
			}
			if o.requestWide && resp.ErrorCode == 0 {
				resp.ErrorCode = o.code
				msg := o.message
				resp.ErrorMessage = &msg
			}
			out.Partitions = append(out.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return resp
}

// checkReassignment checks one requested change against the applied state
// so that the common mistakes get a precise message without a quorum round
// trip; the state machine checks again when the record applies. bad is
// false when the change should be proposed.
func checkReassignment(st cluster.State, topic string, partition int32, target []int32) (o reassignOutcome, bad bool) {
	t, ok := st.Topic(topic)
	if !ok {
		return reassignOutcome{code: kerr.UnknownTopicOrPartition.Code, message: fmt.Sprintf("unknown topic %q", topic)}, true
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return reassignOutcome{code: kerr.UnknownTopicOrPartition.Code, message: fmt.Sprintf("topic %q has no partition %d", topic, partition)}, true
	}
	if target == nil {
		if !t.Partitions[partition].Reassigning() {
			return reassignOutcome{code: kerr.NoReassignmentInProgress.Code, message: fmt.Sprintf("no reassignment of %s-%d is in progress", topic, partition)}, true
		}
		return reassignOutcome{}, false
	}
	invalid := func(format string, args ...any) (reassignOutcome, bool) {
		return reassignOutcome{code: kerr.InvalidReplicaAssignment.Code, message: fmt.Sprintf("%s-%d: ", topic, partition) + fmt.Sprintf(format, args...)}, true
	}
	if len(target) == 0 {
		return invalid("the replica list is empty (null replicas cancel a reassignment)")
	}
	for i, id := range target {
		if slices.Contains(target[:i], id) {
			return invalid("broker %d is listed twice", id)
		}
		if _, ok := st.Brokers[id]; !ok {
			return invalid("broker %d is not registered", id)
		}
	}
	return reassignOutcome{}, false
}

// reassignResult maps the outcome of proposing rec to a Kafka error code.
func reassignResult(rec cluster.ReassignPartition, err error) reassignOutcome {
	var notLeader *metadata.NotLeaderError
	switch {
	case err == nil:
		return reassignOutcome{}
	case errors.Is(err, cluster.ErrTopicNotFound), errors.Is(err, cluster.ErrPartitionNotFound):
		return reassignOutcome{code: kerr.UnknownTopicOrPartition.Code, message: fmt.Sprintf("unknown partition %s-%d", rec.Topic, rec.Partition)}
	case errors.Is(err, cluster.ErrInvalidReplicaAssignment):
		return reassignOutcome{code: kerr.InvalidReplicaAssignment.Code, message: err.Error()}
	case errors.Is(err, cluster.ErrNoReassignmentInProgress):
		return reassignOutcome{code: kerr.NoReassignmentInProgress.Code, message: fmt.Sprintf("no reassignment of %s-%d is in progress", rec.Topic, rec.Partition)}
	case errors.Is(err, cluster.ErrInvalid):
		// A name or partition number no topic can have.
		return reassignOutcome{code: kerr.UnknownTopicOrPartition.Code, message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &notLeader):
		return reassignOutcome{code: kerr.RequestTimedOut.Code, message: "the metadata quorum did not apply the change in time; it may still take effect"}
	case errors.Is(err, metadata.ErrClosed), errors.Is(err, context.Canceled):
		return reassignOutcome{code: kerr.NotController.Code, message: "this node is shutting down", requestWide: true}
	default:
		return reassignOutcome{code: kerr.UnknownServerError.Code, message: err.Error()}
	}
}

package broker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rotatedReplicas places partition p on two of nodes 1..3, starting at
// node 1+(p+shift)%3: every partition has a distinct-enough replica list
// that a placement by the controller's plan would not match it.
func rotatedReplicas(p, shift int) []int32 {
	return []int32{int32(1 + (p+shift)%3), int32(1 + (p+shift+1)%3)}
}

// assignedTopicRequest is a CreateTopics request for topic with one
// manual assignment entry per element of partitions, in that order.
func assignedTopicRequest(topic string, partitions []int32, replicas func(p int32) []int32) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for _, p := range partitions {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = p, replicas(p)
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// awaitPlacement waits until Metadata (through cl) lists every partition
// of topic with the replicas want[p], in that order, and fails the test
// with what it last saw otherwise.
func awaitPlacement(t *testing.T, cl *kgo.Client, topic string, want [][]int32) {
	t.Helper()
	adm := kadm.NewClient(cl)
	ctx := testContext(t)
	var last string
	deadline := time.Now().Add(15 * time.Second)
	for {
		md, err := adm.Metadata(ctx, topic)
		td, ok := md.Topics[topic]
		switch {
		case err != nil:
			last = err.Error()
		case !ok || td.Err != nil:
			last = fmt.Sprintf("topic %v", td.Err)
		case len(td.Partitions) != len(want):
			last = fmt.Sprintf("%d partitions, want %d", len(td.Partitions), len(want))
		default:
			last = ""
			for p, r := range want {
				if got := td.Partitions[int32(p)].Replicas; !slices.Equal(got, r) {
					last += fmt.Sprintf(" partition %d: replicas %v, want %v;", p, got, r)
				}
			}
			if last == "" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: placement not as assigned after 15s: %s", topic, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCreateTopicsReplicaAssignmentAnyOrder: a manual replica assignment
// may list its partitions in any order (sarama sends them from a Go map)
// and the partitions are placed as assigned; duplicates, gaps, uneven
// replica counts and a partition count or replication factor given with
// an assignment are refused, and nothing is created.
func TestCreateTopicsReplicaAssignmentAnyOrder(t *testing.T) {
	c := startTestCluster(t, 3)
	cl := c.client()
	adm := kadm.NewClient(cl)
	ctx := testContext(t)

	t.Run("sarama map", func(t *testing.T) {
		sa, err := sarama.NewClusterAdmin(c.bootstrap(), saramaConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer sa.Close()
		detail := &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: map[int32][]int32{}}
		var want [][]int32
		for p := range 15 {
			detail.ReplicaAssignment[int32(p)] = rotatedReplicas(p, 0)
			want = append(want, rotatedReplicas(p, 0))
		}
		if err := sa.CreateTopic("sarama-assigned", detail, false); err != nil {
			t.Fatalf("sarama CreateTopic with 15 assigned partitions: %v", err)
		}
		awaitPlacement(t, cl, "sarama-assigned", want)

		// A map cannot hold a partition twice, but it can miss one.
		gap := &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: map[int32][]int32{0: {1, 2}, 2: {2, 3}}}
		err = sa.CreateTopic("sarama-gap", gap, false)
		if !errors.Is(err, sarama.ErrInvalidReplicaAssignment) || !strings.Contains(err.Error(), "partition 1 is not assigned") {
			t.Errorf("sarama assignment of partitions 0 and 2: %v, want INVALID_REPLICA_ASSIGNMENT naming partition 1", err)
		}
	})

	t.Run("reversed", func(t *testing.T) {
		var order []int32
		var want [][]int32
		for p := range 15 {
			order = append(order, int32(14-p))
			want = append(want, rotatedReplicas(p, 1))
		}
		req := assignedTopicRequest("reversed", order, func(p int32) []int32 { return rotatedReplicas(int(p), 1) })
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if rt := resp.Topics[0]; rt.ErrorCode != 0 || rt.NumPartitions != 15 || rt.ReplicationFactor != 2 {
			t.Fatalf("partitions 14..0: error %v (%v), %d partitions, rf %d", kerr.ErrorForCode(rt.ErrorCode), derefString(rt.ErrorMessage), rt.NumPartitions, rt.ReplicationFactor)
		}
		awaitPlacement(t, cl, "reversed", want)
	})

	t.Run("refused", func(t *testing.T) {
		two := func(p int32) []int32 { return rotatedReplicas(int(p), 0) }
		cases := []struct {
			name    string
			req     *kmsg.CreateTopicsRequest
			want    *kerr.Error
			message string
		}{
			{"duplicate", assignedTopicRequest("dup", []int32{0, 1, 1}, two), kerr.InvalidReplicaAssignment, "partition 1 is assigned more than once"},
			{"gap", assignedTopicRequest("gap", []int32{0, 2}, two), kerr.InvalidReplicaAssignment, "partition 1 is not assigned"},
			{"negative", assignedTopicRequest("negative", []int32{-1, 0}, two), kerr.InvalidReplicaAssignment, "partition 1 is not assigned"},
			{"uneven", assignedTopicRequest("uneven", []int32{1, 0}, func(p int32) []int32 { return two(p)[:1+p] }), kerr.InvalidReplicaAssignment, "partition 1 has 2 replicas, partition 0 has 1"},
			{"unknown broker", assignedTopicRequest("stranger", []int32{0}, func(int32) []int32 { return []int32{1, 9} }), kerr.InvalidReplicaAssignment, "broker 9 is not registered"},
			{"broker twice", assignedTopicRequest("twice", []int32{0}, func(int32) []int32 { return []int32{2, 2} }), kerr.InvalidReplicaAssignment, "broker 2 is listed twice"},
		}
		withCount := assignedTopicRequest("counted", []int32{0}, two)
		withCount.Topics[0].NumPartitions = 1
		cases = append(cases, struct {
			name    string
			req     *kmsg.CreateTopicsRequest
			want    *kerr.Error
			message string
		}{"num_partitions set", withCount, kerr.InvalidRequest, "must be -1"})
		withRF := assignedTopicRequest("factored", []int32{0}, two)
		withRF.Topics[0].ReplicationFactor = 2
		cases = append(cases, struct {
			name    string
			req     *kmsg.CreateTopicsRequest
			want    *kerr.Error
			message string
		}{"replication_factor set", withRF, kerr.InvalidRequest, "must be -1"})

		for _, tc := range cases {
			resp, err := tc.req.RequestWith(ctx, cl)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			rt := resp.Topics[0]
			if rt.ErrorCode != tc.want.Code || rt.ErrorMessage == nil || !strings.Contains(*rt.ErrorMessage, tc.message) {
				t.Errorf("%s: %v (%v), want %v with a message containing %q", tc.name, kerr.ErrorForCode(rt.ErrorCode), derefString(rt.ErrorMessage), tc.want, tc.message)
			}
		}
		listed, err := adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			if name := tc.req.Topics[0].Topic; listed.Has(name) {
				t.Errorf("%s: topic %s was created", tc.name, name)
			}
		}
	})
}

// TestCreatePartitionsReplicaAssignment: CreatePartitions places new
// partitions as its (positional) assignment says, on any registered
// brokers, and refuses a list of the wrong replica count.
func TestCreatePartitionsReplicaAssignment(t *testing.T) {
	c := startTestCluster(t, 3)
	cl := c.client()
	ctx := testContext(t)
	create := assignedTopicRequest("growing", []int32{0, 1}, func(p int32) []int32 { return rotatedReplicas(int(p), 0) })
	if resp, err := create.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}

	grow := func(count int32, replicas ...[]int32) kmsg.CreatePartitionsResponseTopic {
		t.Helper()
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "growing", count
		for _, r := range replicas {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = r
			rt.Assignment = append(rt.Assignment, a)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0]
	}
	for _, tc := range []struct {
		name     string
		replicas [][]int32
		message  string
	}{
		{"one replica for a two-replica topic", [][]int32{{3}}, "1 replicas, but the topic's partitions have 2"},
		{"unknown broker", [][]int32{{3, 7}}, "broker 7 is not registered"},
		{"broker twice", [][]int32{{3, 3}}, "broker 3 is listed twice"},
		{"two lists for one partition", [][]int32{{3, 1}, {1, 2}}, "1 new partitions but 2 assignments"},
	} {
		if got := grow(3, tc.replicas...); got.ErrorCode != kerr.InvalidReplicaAssignment.Code || !strings.Contains(derefString(got.ErrorMessage), tc.message) {
			t.Errorf("%s: %v (%s), want INVALID_REPLICA_ASSIGNMENT containing %q", tc.name, kerr.ErrorForCode(got.ErrorCode), derefString(got.ErrorMessage), tc.message)
		}
	}
	// Neither node 1 alone nor the plan: exactly these lists.
	if got := grow(4, []int32{3, 2}, []int32{2, 3}); got.ErrorCode != 0 {
		t.Fatalf("grow to 4 with an assignment: %v (%s)", kerr.ErrorForCode(got.ErrorCode), derefString(got.ErrorMessage))
	}
	awaitPlacement(t, cl, "growing", [][]int32{rotatedReplicas(0, 0), rotatedReplicas(1, 0), {3, 2}, {2, 3}})
	// Without an assignment the plan still places them.
	if got := grow(5); got.ErrorCode != 0 {
		t.Fatalf("grow to 5 without an assignment: %v (%s)", kerr.ErrorForCode(got.ErrorCode), derefString(got.ErrorMessage))
	}
	waitUntil(t, 10*time.Second, "5 partitions", func() bool {
		p, err := partitionMetadata(ctx, cl, "growing", 4)
		return err == nil && len(p.Replicas) == 2
	})
}

func derefString(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeQuorumRequest(topic string) *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDescribeQuorumRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// TestDescribeQuorum: three voters and a broker-only observer. The raft
// leader describes the quorum (franz-go's kmsg, as kcl sends it): its term,
// the commit index, every voter caught up and recently heard from, the
// observer streaming from it, the voters' endpoints (v2); the other nodes
// answer NOT_LEADER_OR_FOLLOWER naming the leader; another topic is
// UNKNOWN_TOPIC_OR_PARTITION.
func TestDescribeQuorum(t *testing.T) {
	c := startTestCluster(t, 3)
	bcfg := DefaultConfig()
	bcfg.NodeID, bcfg.ProcessRoles = 4, "broker"
	bcfg.DataDir, bcfg.Listen, bcfg.HTTPListen = t.TempDir(), freeLoopbackAddr(t), ""
	bcfg.ControllerQuorumVoters = c.nodes[0].cfg.ControllerQuorumVoters
	c.nodes = append(c.nodes, &testBroker{t: t, cfg: bcfg})
	c.startAll()
	ctx := testContext(t)
	cl := c.client()
	adm := kadm.NewClient(cl)
	waitUntil(t, 20*time.Second, "four brokers", func() bool {
		md, err := adm.Metadata(ctx)
		return err == nil && len(md.Brokers) == 4
	})

	var leader *kmsg.DescribeQuorumResponseTopicPartition
	var resp *kmsg.DescribeQuorumResponse
	waitUntil(t, 20*time.Second, "the leader describing the observer and caught-up voters", func() bool {
		leader = nil
		notLeader := 0
		for id := int32(1); id <= 4; id++ {
			r, err := describeQuorumRequest("__cluster_metadata").RequestWith(ctx, cl.Broker(int(id)))
			if err != nil || r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
				return false
			}
			p := r.Topics[0].Partitions[0]
			switch p.ErrorCode {
			case 0:
				leader, resp = &p, r
			case kerr.NotLeaderForPartition.Code:
				notLeader++
			}
		}
		if leader == nil || notLeader != 3 || len(leader.CurrentVoters) != 3 || len(leader.Observers) != 1 || leader.Observers[0].ReplicaID != 4 {
			return false
		}
		for _, v := range leader.CurrentVoters {
			if v.LastCaughtUpTimestamp <= 0 || v.LogEndOffset < leader.HighWatermark {
				return false
			}
		}
		return true
	})
	if leader.LeaderEpoch <= 0 || leader.HighWatermark <= 0 || time.Since(time.UnixMilli(leader.CurrentVoters[0].LastFetchTimestamp)) > time.Minute {
		t.Fatalf("leader's answer: %+v", leader)
	}
	if len(resp.Nodes) != 3 || resp.Nodes[0].Listeners[0].Name != "CONTROLLER" || resp.Nodes[0].Listeners[0].Port == 0 {
		t.Fatalf("nodes: %+v", resp.Nodes)
	}
	r, err := describeQuorumRequest("other").RequestWith(ctx, cl.Broker(int(leader.LeaderID)))
	if err != nil || r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("another topic: %v %+v", err, r)
	}
}

package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
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

// TestDescribeQuorum: three voters and a broker-only observer. Every node
// answers with the raft leader's view (franz-go's kmsg, as kcl sends it):
// the leader itself, and the followers and the observer by forwarding the
// request to it, in the client's version (v0 from a follower too): its
// term, the commit index, every voter caught up and recently heard from,
// the observer streaming from it, the voters' endpoints (v2); another
// topic is UNKNOWN_TOPIC_OR_PARTITION. With two voters stopped, the
// survivor knows no leader: NOT_LEADER_OR_FOLLOWER, leader -1, and a
// message saying so.
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
	waitUntil(t, 20*time.Second, "every node describing the observer and caught-up voters", func() bool {
		leader = nil
		for id := int32(1); id <= 4; id++ {
			r, err := describeQuorumRequest("__cluster_metadata").RequestWith(ctx, cl.Broker(int(id)))
			if err != nil || r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
				return false
			}
			p := r.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || leader != nil && (p.LeaderID != leader.LeaderID || p.LeaderEpoch != leader.LeaderEpoch) {
				return false
			}
			if len(p.CurrentVoters) != 3 || len(p.Observers) != 1 || p.Observers[0].ReplicaID != 4 || len(r.Nodes) != 3 {
				return false
			}
			for _, v := range p.CurrentVoters {
				if v.LastCaughtUpTimestamp <= 0 || v.LogEndOffset < p.HighWatermark {
					return false
				}
			}
			if leader == nil {
				leader, resp = &p, r
			}
		}
		return true
	})
	if leader.LeaderEpoch <= 0 || leader.HighWatermark <= 0 || time.Since(time.UnixMilli(leader.CurrentVoters[0].LastFetchTimestamp)) > time.Minute {
		t.Fatalf("leader's answer: %+v", leader)
	}
	if resp.Nodes[0].Listeners[0].Name != "CONTROLLER" || resp.Nodes[0].Listeners[0].Port == 0 {
		t.Fatalf("nodes: %+v", resp.Nodes)
	}
	follower := leader.LeaderID%3 + 1 // a voter that is not the leader
	r, err := describeQuorumRequest("other").RequestWith(ctx, cl.Broker(int(follower)))
	if err != nil || r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("another topic from follower %d: %v %+v", follower, err, r)
	}

	// v0 through a follower: the leader's answer in the client's version.
	v0 := kversion.Stable()
	v0.SetMaxKeyVersion(kmsg.DescribeQuorum.Int16(), 0)
	r, err = describeQuorumRequest("__cluster_metadata").RequestWith(ctx, c.client(kgo.MaxVersions(v0)).Broker(int(follower)))
	if err != nil || r.Version != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 || r.Topics[0].Partitions[0].LeaderID != leader.LeaderID ||
		len(r.Topics[0].Partitions[0].CurrentVoters) != 3 || len(r.Nodes) != 0 {
		t.Fatalf("v0 from follower %d: %v %+v", follower, err, r)
	}

	// The two other voters stop: the survivor has no leader to forward to.
	survivor := follower
	for id := int32(1); id <= 3; id++ {
		if id != survivor {
			c.node(id).stop()
		}
	}
	var p kmsg.DescribeQuorumResponseTopicPartition
	waitUntil(t, 20*time.Second, "the survivor knowing no leader", func() bool {
		r, err := describeQuorumRequest("__cluster_metadata").RequestWith(ctx, cl.Broker(int(survivor)))
		if err != nil || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			return false
		}
		p = r.Topics[0].Partitions[0]
		return p.LeaderID == -1
	})
	if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.ErrorMessage == nil || *p.ErrorMessage != "the metadata quorum has no leader now; retry" ||
		len(p.CurrentVoters) != 0 {
		t.Fatalf("without a leader: %+v (message %v)", p, p.ErrorMessage)
	}
}

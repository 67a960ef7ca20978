package broker

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KIP-951: a Produce (v10+) sent to a follower, or a Fetch (v12+,
// endpoints v16+) sent to a node that hosts no replica (a follower serves
// consumers' v11+ fetches, KIP-392), answers NOT_LEADER_OR_FOLLOWER with
// the current leader, its epoch and its endpoint, decoded here by kmsg
// from raw requests.
func TestLeaderHintsKIP951(t *testing.T) {
	c := startTestCluster(t, 3)
	ctx := testContext(t)
	cl := c.client()
	adm := kadm.NewClient(cl)
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, "hints"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	var leader, epoch int32 = -1, -1
	waitUntil(t, 10*time.Second, "a leader for hints-0", func() bool {
		md, err := adm.Metadata(ctx, "hints")
		if err != nil {
			return false
		}
		p := md.Topics["hints"].Partitions[0]
		leader, epoch = p.Leader, p.LeaderEpoch
		return leader > 0 && len(p.ISR) == 3
	})
	follower := leader%3 + 1
	waitUntil(t, 10*time.Second, "the follower to host hints-0", func() bool {
		return c.node(follower).srv.topics.partition("hints", 0) != nil
	})
	wantHost, wantPortStr, _ := net.SplitHostPort(c.node(leader).cfg.Listen)
	wantPort, _ := strconv.Atoi(wantPortStr)
	// Raw requests at the version set on them, to a follower.
	raw := c.node(follower).dialRaw()

	for _, v := range []int16{9, 10, 12} {
		req := kmsg.NewPtrProduceRequest()
		req.Version = v
		req.Acks = -1
		req.TimeoutMillis = 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "hints"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = buildBatch(t, plainBatch(testRecord{key: []byte("k"), value: []byte("v"), timestamp: time.Now().UnixMilli()}))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := roundTrip[*kmsg.ProduceResponse](raw, req)
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("produce v%d to follower %d: error %d, want NOT_LEADER_OR_FOLLOWER", v, follower, sp.ErrorCode)
		}
		if v < 10 {
			if len(resp.Brokers) != 0 || sp.CurrentLeader.LeaderID != -1 {
				t.Fatalf("produce v%d: hint %+v brokers %v before v10", v, sp.CurrentLeader, resp.Brokers)
			}
			continue
		}
		if sp.CurrentLeader.LeaderID != leader || sp.CurrentLeader.LeaderEpoch != epoch {
			t.Fatalf("produce v%d: current leader %d@%d, want %d@%d", v, sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch, leader, epoch)
		}
		if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != leader || resp.Brokers[0].Host != wantHost || resp.Brokers[0].Port != int32(wantPort) {
			t.Fatalf("produce v%d: node endpoints %+v, want node %d at %s:%d", v, resp.Brokers, leader, wantHost, wantPort)
		}
	}

	// A follower serves a consumer's v11+ fetch (KIP-392): the fetch
	// hints come from a node that hosts no replica of the partition.
	soloReq := kmsg.NewPtrCreateTopicsRequest()
	st := kmsg.NewCreateTopicsRequestTopic()
	st.Topic, st.NumPartitions, st.ReplicationFactor = "hints-solo", -1, -1
	sa := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	sa.Partition, sa.Replicas = 0, []int32{leader}
	st.ReplicaAssignment = append(st.ReplicaAssignment, sa)
	soloReq.Topics, soloReq.TimeoutMillis = append(soloReq.Topics, st), 30000
	if resp, err := soloReq.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create hints-solo: %v %+v", err, resp)
	}
	// Asked of the follower itself: the fetches below go to it, and
	// another node may apply the new topic first.
	waitUntil(t, 10*time.Second, "the follower to know the leader of hints-solo-0", func() bool {
		mreq := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("hints-solo")
		mreq.Topics = append(mreq.Topics, mt)
		md, err := mreq.RequestWith(ctx, cl.Broker(int(follower)))
		if err != nil || len(md.Topics) != 1 || md.Topics[0].ErrorCode != 0 || len(md.Topics[0].Partitions) != 1 {
			return false
		}
		p := md.Topics[0].Partitions[0]
		epoch = p.LeaderEpoch
		return p.Leader == leader
	})
	for _, v := range []int16{11, 12, 15, 16} {
		req := kmsg.NewPtrFetchRequest()
		req.Version = v
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MaxBytes = 1 << 20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "hints-solo"
		md, err := adm.Metadata(ctx, "hints-solo")
		if err != nil {
			t.Fatal(err)
		}
		rt.TopicID = md.Topics["hints-solo"].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := roundTrip[*kmsg.FetchResponse](raw, req)
		fp := resp.Topics[0].Partitions[0]
		if fp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("fetch v%d from a node without a replica: error %d, want NOT_LEADER_OR_FOLLOWER", v, fp.ErrorCode)
		}
		wantLeader, wantEpoch := leader, epoch
		if v < 12 {
			wantLeader, wantEpoch = -1, -1
		}
		if fp.CurrentLeader.LeaderID != wantLeader || fp.CurrentLeader.LeaderEpoch != wantEpoch {
			t.Fatalf("fetch v%d: current leader %d@%d, want %d@%d", v, fp.CurrentLeader.LeaderID, fp.CurrentLeader.LeaderEpoch, wantLeader, wantEpoch)
		}
		wantNodes := 0
		if v >= 16 {
			wantNodes = 1
		}
		if len(resp.Brokers) != wantNodes || (wantNodes == 1 && (resp.Brokers[0].NodeID != leader || resp.Brokers[0].Port != int32(wantPort))) {
			t.Fatalf("fetch v%d: node endpoints %+v, want %d naming node %d", v, resp.Brokers, wantNodes, leader)
		}
	}
}

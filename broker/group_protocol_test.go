package broker

// The group APIs driven by hand with raw requests at exact versions: the
// errors clients rely on, every version's encoding, FindCoordinator and
// the protection of __consumer_offsets.

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func joinGroupReq(version int16, group, memberID string, instance *string, meta []byte) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = version
	req.Group = group
	req.MemberID = memberID
	req.InstanceID = instance
	req.SessionTimeoutMillis = 10000
	req.RebalanceTimeoutMillis = 10000
	req.ProtocolType = "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", meta
	req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	return req
}

func syncGroupReq(version int16, group, memberID string, generation int32, plan map[string][]byte) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = version
	req.Group, req.MemberID, req.Generation = group, memberID, generation
	for id, a := range plan {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	return req
}

func heartbeatReq(version int16, group, memberID string, generation int32) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = version
	req.Group, req.MemberID, req.Generation = group, memberID, generation
	return req
}

func commitReq(version int16, group, memberID string, generation int32, topic string, partition int32, offset int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = version
	req.Group, req.MemberID, req.Generation = group, memberID, generation
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = partition, offset
	rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{rp}
	req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
	return req
}

func commitErr(t *testing.T, c *rawConn, req *kmsg.OffsetCommitRequest) *kerr.Error {
	t.Helper()
	resp := roundTrip[*kmsg.OffsetCommitResponse](c, req)
	return kerrOf(resp.Topics[0].Partitions[0].ErrorCode)
}

func kerrOf(code int16) *kerr.Error {
	if code == 0 {
		return nil
	}
	err, _ := kerr.ErrorForCode(code).(*kerr.Error)
	return err
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	if kerrOf(got) != want {
		t.Fatalf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

func consumerSubscription(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

// joinNew does the KIP-394 dance on c and returns the join response.
func joinNew(t *testing.T, c *rawConn, group string, instance *string, meta []byte) *kmsg.JoinGroupResponse {
	t.Helper()
	resp := roundTrip[*kmsg.JoinGroupResponse](c, joinGroupReq(9, group, "", instance, meta))
	if instance == nil {
		wantCode(t, "first join", resp.ErrorCode, kerr.MemberIDRequired)
		resp = roundTrip[*kmsg.JoinGroupResponse](c, joinGroupReq(9, group, resp.MemberID, nil, meta))
	}
	wantCode(t, "join", resp.ErrorCode, nil)
	return resp
}

func TestGroupAPIVersionsAdvertised(t *testing.T) {
	want := map[kmsg.Key][2]int16{
		kmsg.OffsetCommit:    {0, 9},
		kmsg.OffsetFetch:     {0, 9},
		kmsg.FindCoordinator: {0, 5},
		kmsg.JoinGroup:       {0, 9},
		kmsg.Heartbeat:       {0, 4},
		kmsg.LeaveGroup:      {0, 5},
		kmsg.SyncGroup:       {0, 5},
		kmsg.DescribeGroups:  {0, 6},
		kmsg.ListGroups:      {0, 5},
		kmsg.DeleteGroups:    {0, 3},
		kmsg.OffsetDelete:    {0, 0},
		// KIP-848, advertised by default (group.consumer.protocol.enable)
		// since franz-go's own 848 group tests pass against Strata.
		kmsg.ConsumerGroupHeartbeat: {0, 1},
		kmsg.ConsumerGroupDescribe:  {0, 1},
	}
	tb := startTestBroker(t)
	resp := roundTrip[*kmsg.ApiVersionsResponse](tb.dialRaw(), kmsg.NewPtrApiVersionsRequest())
	got := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		got[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	for key, r := range want {
		if got[key.Int16()] != r {
			t.Errorf("%s: advertised %v, want %v", key.Name(), got[key.Int16()], r)
		}
	}
}

func TestFindCoordinatorEveryVersion(t *testing.T) {
	tb := startGroupTestBroker(t)
	c := tb.dialRaw()
	host, port := tb.srv.advertisedHostPort()
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version = v
		if v >= 4 {
			req.CoordinatorKeys = []string{"g1", "g2"}
		} else {
			req.CoordinatorKey = "g1"
		}
		resp := roundTrip[*kmsg.FindCoordinatorResponse](c, req)
		if v >= 4 {
			if len(resp.Coordinators) != 2 || resp.Coordinators[1].Key != "g2" || resp.Coordinators[1].NodeID != tb.cfg.NodeID || resp.Coordinators[0].Port != port {
				t.Fatalf("v%d: %+v", v, resp.Coordinators)
			}
			continue
		}
		if resp.ErrorCode != 0 || resp.NodeID != tb.cfg.NodeID || resp.Host != host || resp.Port != port {
			t.Fatalf("v%d: %+v", v, resp)
		}
	}
	for _, c2 := range []struct {
		keyType int8
		want    *kerr.Error
	}{{1, nil}, {7, kerr.InvalidRequest}} { // 1: the transaction coordinator, this node
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version = 4
		req.CoordinatorType = c2.keyType
		req.CoordinatorKeys = []string{"x"}
		resp := roundTrip[*kmsg.FindCoordinatorResponse](c, req)
		wantCode(t, "key type", resp.Coordinators[0].ErrorCode, c2.want)
	}

	// The first FindCoordinator created __consumer_offsets, internal and
	// compacted, with offsets.topic.num.partitions partitions.
	meta := roundTrip[*kmsg.MetadataResponse](c, func() *kmsg.MetadataRequest { r := kmsg.NewPtrMetadataRequest(); r.Version = 12; return r }())
	found := false
	for _, mt := range meta.Topics {
		if *mt.Topic == consumerOffsetsTopic {
			found = true
			if !mt.IsInternal || len(mt.Partitions) != 50 {
				t.Fatalf("__consumer_offsets: internal=%v partitions=%d", mt.IsInternal, len(mt.Partitions))
			}
		} else if mt.IsInternal != (*mt.Topic == transactionStateTopic) {
			// FindCoordinator of key type 1 above created __transaction_state.
			t.Fatalf("%s: internal=%v", *mt.Topic, mt.IsInternal)
		}
	}
	if !found {
		t.Fatal("__consumer_offsets is not listed by Metadata")
	}
	cfgs, err := tb.admin().DescribeTopicConfigs(testContext(t), consumerOffsetsTopic)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range cfgs[0].Configs {
		if cfg.Key == "cleanup.policy" && (cfg.Value == nil || *cfg.Value != "compact") {
			t.Fatalf("cleanup.policy %v", cfg.Value)
		}
	}
}

func TestConsumerOffsetsTopicIsProtected(t *testing.T) {
	tb := startGroupTestBroker(t)
	c := tb.dialRaw()
	// Naming it in Metadata creates it with the coordinator's settings.
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(consumerOffsetsTopic)
	req.Topics = []kmsg.MetadataRequestTopic{rt}
	// The creating request is answered LEADER_NOT_AVAILABLE, as Kafka
	// does; the client asks again.
	meta := roundTrip[*kmsg.MetadataResponse](c, req)
	if meta.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code || !meta.Topics[0].IsInternal {
		t.Fatalf("creating metadata %+v", meta.Topics[0])
	}
	meta = roundTrip[*kmsg.MetadataResponse](c, req)
	if meta.Topics[0].ErrorCode != 0 || len(meta.Topics[0].Partitions) != 50 || !meta.Topics[0].IsInternal {
		t.Fatalf("metadata %+v", meta.Topics[0])
	}

	batch := buildBatch(t, plainBatch(testRecord{key: []byte("k"), value: []byte("v")}))
	sp := c.produceRaw(consumerOffsetsTopic, 0, batch)
	wantCode(t, "produce to __consumer_offsets", sp.ErrorCode, kerr.InvalidTopicException)

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 5
	del.TopicNames = []string{consumerOffsetsTopic}
	delResp := roundTrip[*kmsg.DeleteTopicsResponse](c, del)
	wantCode(t, "delete __consumer_offsets", delResp.Topics[0].ErrorCode, kerr.InvalidRequest)

	grow := kmsg.NewPtrCreatePartitionsRequest()
	grow.Version = 3
	gt := kmsg.NewCreatePartitionsRequestTopic()
	gt.Topic, gt.Count = consumerOffsetsTopic, 60
	grow.Topics = []kmsg.CreatePartitionsRequestTopic{gt}
	growResp := roundTrip[*kmsg.CreatePartitionsResponse](c, grow)
	wantCode(t, "grow __consumer_offsets", growResp.Topics[0].ErrorCode, kerr.InvalidRequest)
}

func TestGroupProtocolErrors(t *testing.T) {
	tb := startGroupTestBroker(t)
	tb.createTopic("t", 2, nil)
	c1, c2 := tb.dialRaw(), tb.dialRaw()
	const group = "errors"
	meta := consumerSubscription("t")

	bad := joinGroupReq(9, "", "", nil, meta)
	wantCode(t, "empty group id", roundTrip[*kmsg.JoinGroupResponse](c1, bad).ErrorCode, kerr.InvalidGroupID)
	short := joinGroupReq(9, group, "", nil, meta)
	short.SessionTimeoutMillis = 1000
	wantCode(t, "short session", roundTrip[*kmsg.JoinGroupResponse](c1, short).ErrorCode, kerr.InvalidSessionTimeout)
	wantCode(t, "unknown member of a missing group", roundTrip[*kmsg.JoinGroupResponse](c1, joinGroupReq(9, "missing", "ghost", nil, meta)).ErrorCode, kerr.UnknownMemberID)
	wantCode(t, "sync of a missing group", roundTrip[*kmsg.SyncGroupResponse](c1, syncGroupReq(5, "missing", "ghost", 1, nil)).ErrorCode, kerr.UnknownMemberID)
	wantCode(t, "heartbeat of a missing group", roundTrip[*kmsg.HeartbeatResponse](c1, heartbeatReq(4, "missing", "ghost", 1)).ErrorCode, kerr.UnknownMemberID)
	if err := commitErr(t, c1, commitReq(8, "missing", "ghost", 3, "t", 0, 1)); err != kerr.IllegalGeneration {
		t.Fatalf("member commit to a missing group (v8): %v", err)
	}
	if err := commitErr(t, c1, commitReq(9, "missing", "ghost", 3, "t", 0, 1)); err != kerr.GroupIDNotFound {
		t.Fatalf("member commit to a missing group (v9): %v", err)
	}

	first := joinNew(t, c1, group, nil, meta)
	a := first.MemberID
	if first.LeaderID != a || first.Generation != 1 || len(first.Members) != 1 || *first.Protocol != "range" || *first.ProtocolType != "consumer" {
		t.Fatalf("first join %+v", first)
	}
	wantCode(t, "heartbeat before sync", roundTrip[*kmsg.HeartbeatResponse](c1, heartbeatReq(4, group, a, 1)).ErrorCode, nil)
	wantCode(t, "commit before sync", commitErrCode(t, c1, commitReq(9, group, a, 1, "t", 0, 1)), kerr.RebalanceInProgress)
	wrongProto := syncGroupReq(5, group, a, 1, nil)
	wrongProto.Protocol = kmsg.StringPtr("roundrobin")
	wantCode(t, "sync with another protocol", roundTrip[*kmsg.SyncGroupResponse](c1, wrongProto).ErrorCode, kerr.InconsistentGroupProtocol)
	sync := roundTrip[*kmsg.SyncGroupResponse](c1, syncGroupReq(5, group, a, 1, map[string][]byte{a: []byte("all of t")}))
	if sync.ErrorCode != 0 || string(sync.MemberAssignment) != "all of t" || *sync.Protocol != "range" {
		t.Fatalf("sync %+v", sync)
	}

	wantCode(t, "old generation", roundTrip[*kmsg.HeartbeatResponse](c1, heartbeatReq(4, group, a, 0)).ErrorCode, kerr.IllegalGeneration)
	wantCode(t, "unknown member", roundTrip[*kmsg.HeartbeatResponse](c1, heartbeatReq(4, group, "ghost", 1)).ErrorCode, kerr.UnknownMemberID)
	wantCode(t, "commit old generation", commitErrCode(t, c1, commitReq(9, group, a, 0, "t", 0, 1)), kerr.IllegalGeneration)
	wantCode(t, "commit unknown member", commitErrCode(t, c1, commitReq(9, group, "ghost", 1, "t", 0, 1)), kerr.UnknownMemberID)
	wantCode(t, "simple commit to an active group", commitErrCode(t, c1, commitReq(9, group, "", -1, "t", 0, 1)), kerr.UnknownMemberID)
	wantCode(t, "commit unknown topic", commitErrCode(t, c1, commitReq(9, group, a, 1, "nope", 0, 1)), kerr.UnknownTopicOrPartition)
	wantCode(t, "commit", commitErrCode(t, c1, commitReq(9, group, a, 1, "t", 0, 5)), nil)

	// b joins on its own connection; its JoinGroup blocks there while the
	// group rebalances, and c1 is not held up.
	probe := roundTrip[*kmsg.JoinGroupResponse](c2, joinGroupReq(9, group, "", nil, meta))
	b := probe.MemberID
	bJoin := joinGroupReq(9, group, b, nil, meta)
	bCorr := c2.send(bJoin)
	waitFor(t, 10*time.Second, "the rebalance to start", func() bool {
		return kerrOf(roundTrip[*kmsg.HeartbeatResponse](c1, heartbeatReq(4, group, a, 1)).ErrorCode) == kerr.RebalanceInProgress
	})
	wantCode(t, "commit while rebalancing", commitErrCode(t, c1, commitReq(9, group, a, 1, "t", 0, 6)), nil)
	wantCode(t, "sync while rebalancing", roundTrip[*kmsg.SyncGroupResponse](c1, syncGroupReq(5, group, a, 1, nil)).ErrorCode, kerr.RebalanceInProgress)
	aJoin := roundTrip[*kmsg.JoinGroupResponse](c1, joinGroupReq(9, group, a, nil, meta))
	raw, err := c2.readResponse(bJoin, bCorr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bResp := raw.(*kmsg.JoinGroupResponse)
	if aJoin.Generation != 2 || bResp.Generation != 2 || aJoin.LeaderID != a || len(aJoin.Members) != 2 || len(bResp.Members) != 0 {
		t.Fatalf("joins of generation 2: %+v / %+v", aJoin, bResp)
	}

	// b's SyncGroup waits for the leader's.
	bSync := syncGroupReq(5, group, b, 2, nil)
	bSyncCorr := c2.send(bSync)
	wantCode(t, "commit between join and sync", commitErrCode(t, c1, commitReq(9, group, a, 2, "t", 0, 7)), kerr.RebalanceInProgress)
	aSync := roundTrip[*kmsg.SyncGroupResponse](c1, syncGroupReq(5, group, a, 2, map[string][]byte{a: []byte("p0"), b: []byte("p1")}))
	raw, err = c2.readResponse(bSync, bSyncCorr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if string(aSync.MemberAssignment) != "p0" || string(raw.(*kmsg.SyncGroupResponse).MemberAssignment) != "p1" {
		t.Fatalf("assignments %q / %q", aSync.MemberAssignment, raw.(*kmsg.SyncGroupResponse).MemberAssignment)
	}

	// An active consumer group can neither be deleted nor lose the
	// offsets of a topic it subscribes to.
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Version = 2
	del.Groups = []string{group}
	wantCode(t, "delete active group", roundTrip[*kmsg.DeleteGroupsResponse](c1, del).Groups[0].ErrorCode, kerr.NonEmptyGroup)
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = group
	odt := kmsg.NewOffsetDeleteRequestTopic()
	odt.Topic = "t"
	odt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
	od.Topics = []kmsg.OffsetDeleteRequestTopic{odt}
	odResp := roundTrip[*kmsg.OffsetDeleteResponse](c1, od)
	wantCode(t, "offset delete of a subscribed topic", odResp.Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)

	// Batched leave: a known member, an unknown one.
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 5
	leave.Group = group
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: b}, {MemberID: "ghost"}}
	lr := roundTrip[*kmsg.LeaveGroupResponse](c1, leave)
	if lr.ErrorCode != 0 || lr.Members[0].ErrorCode != 0 || kerrOf(lr.Members[1].ErrorCode) != kerr.UnknownMemberID {
		t.Fatalf("leave %+v", lr)
	}
	wantCode(t, "a after b left", roundTrip[*kmsg.HeartbeatResponse](c1, heartbeatReq(4, group, a, 2)).ErrorCode, kerr.RebalanceInProgress)
}

func commitErrCode(t *testing.T, c *rawConn, req *kmsg.OffsetCommitRequest) int16 {
	t.Helper()
	return roundTrip[*kmsg.OffsetCommitResponse](c, req).Topics[0].Partitions[0].ErrorCode
}

func TestGroupStaticMemberFencing(t *testing.T) {
	tb := startGroupTestBroker(t)
	c := tb.dialRaw()
	const group = "fencing"
	inst := kmsg.StringPtr("instance-1")
	first := joinNew(t, c, group, inst, nil)
	roundTrip[*kmsg.SyncGroupResponse](c, syncGroupReq(5, group, first.MemberID, first.Generation, map[string][]byte{first.MemberID: []byte("x")}))
	// The instance restarts: a join without member id replaces the old id.
	again := roundTrip[*kmsg.JoinGroupResponse](c, joinGroupReq(9, group, "", inst, nil))
	if again.ErrorCode != 0 || again.MemberID == first.MemberID || again.Generation != first.Generation || !again.SkipAssignment {
		t.Fatalf("static rejoin %+v (first %s)", again, first.MemberID)
	}
	hb := heartbeatReq(4, group, first.MemberID, first.Generation)
	hb.InstanceID = inst
	wantCode(t, "old member id", roundTrip[*kmsg.HeartbeatResponse](c, hb).ErrorCode, kerr.FencedInstanceID)
	hb.MemberID = again.MemberID
	wantCode(t, "new member id", roundTrip[*kmsg.HeartbeatResponse](c, hb).ErrorCode, nil)
	s := roundTrip[*kmsg.SyncGroupResponse](c, func() *kmsg.SyncGroupRequest {
		r := syncGroupReq(5, group, again.MemberID, again.Generation, nil)
		r.InstanceID = inst
		return r
	}())
	if s.ErrorCode != 0 || string(s.MemberAssignment) != "x" {
		t.Fatalf("the new id inherits the assignment: %+v", s)
	}
	// Admin removal by instance id (LeaveGroup v3+ without member id).
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 4
	leave.Group = group
	leave.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: inst}}
	if lr := roundTrip[*kmsg.LeaveGroupResponse](c, leave); lr.Members[0].ErrorCode != 0 {
		t.Fatalf("leave by instance id %+v", lr)
	}
	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Version = 5
	d.Groups = []string{group}
	if dr := roundTrip[*kmsg.DescribeGroupsResponse](c, d); dr.Groups[0].State != "Empty" {
		t.Fatalf("after the leave: %+v", dr.Groups[0])
	}
}

// TestGroupAPIsEveryVersion runs a one-member group through join, sync,
// heartbeat, commit, fetch, describe, list and leave at every version.
func TestGroupAPIsEveryVersion(t *testing.T) {
	tb := startGroupTestBroker(t)
	tb.createTopic("t", 1, nil)
	c := tb.dialRaw()
	clamp := func(v, most int16) int16 { return min(v, most) }
	for v := int16(0); v <= 9; v++ {
		group := "every-" + string(rune('0'+v))
		join := joinGroupReq(v, group, "", nil, consumerSubscription("t"))
		jr := roundTrip[*kmsg.JoinGroupResponse](c, join)
		if v >= 4 {
			wantCode(t, "join", jr.ErrorCode, kerr.MemberIDRequired)
			join.MemberID = jr.MemberID
			jr = roundTrip[*kmsg.JoinGroupResponse](c, join)
		}
		if jr.ErrorCode != 0 || jr.Generation != 1 || jr.LeaderID != jr.MemberID || len(jr.Members) != 1 {
			t.Fatalf("JoinGroup v%d: %+v", v, jr)
		}
		id := jr.MemberID
		sr := roundTrip[*kmsg.SyncGroupResponse](c, syncGroupReq(clamp(v, 5), group, id, 1, map[string][]byte{id: []byte("a")}))
		if sr.ErrorCode != 0 || string(sr.MemberAssignment) != "a" {
			t.Fatalf("SyncGroup v%d: %+v", clamp(v, 5), sr)
		}
		wantCode(t, "heartbeat", roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq(clamp(v, 4), group, id, 1)).ErrorCode, nil)
		cv := v
		memberID, gen := id, int32(1)
		if cv == 0 { // v0 has neither member nor generation: a simple commit, refused while active
			wantCode(t, "v0 commit to an active group", commitErrCode(t, c, commitReq(0, group, "", -1, "t", 0, 10)), kerr.UnknownMemberID)
			cv = 1
		}
		wantCode(t, "commit", commitErrCode(t, c, commitReq(cv, group, memberID, gen, "t", 0, int64(10+v))), nil)

		fetch := kmsg.NewPtrOffsetFetchRequest()
		fetch.Version = v
		if v >= 8 {
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = group
			g.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0, 1}}}
			fetch.Groups = []kmsg.OffsetFetchRequestGroup{g}
			fr := roundTrip[*kmsg.OffsetFetchResponse](c, fetch)
			ps := fr.Groups[0].Topics[0].Partitions
			if fr.Groups[0].ErrorCode != 0 || ps[0].Offset != int64(10+v) || ps[1].Offset != -1 {
				t.Fatalf("OffsetFetch v%d: %+v", v, fr)
			}
		} else {
			fetch.Group = group
			fetch.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
			fr := roundTrip[*kmsg.OffsetFetchResponse](c, fetch)
			ps := fr.Topics[0].Partitions
			if fr.ErrorCode != 0 || ps[0].Offset != int64(10+v) || ps[1].Offset != -1 {
				t.Fatalf("OffsetFetch v%d: %+v", v, fr)
			}
		}

		d := kmsg.NewPtrDescribeGroupsRequest()
		d.Version = clamp(v, 6)
		d.Groups = []string{group}
		d.IncludeAuthorizedOperations = true
		dr := roundTrip[*kmsg.DescribeGroupsResponse](c, d)
		dg := dr.Groups[0]
		if dg.ErrorCode != 0 || dg.State != "Stable" || dg.Protocol != "range" || len(dg.Members) != 1 || string(dg.Members[0].MemberAssignment) != "a" || dg.Members[0].ClientHost == "" {
			t.Fatalf("DescribeGroups v%d: %+v", d.Version, dg)
		}

		l := kmsg.NewPtrListGroupsRequest()
		l.Version = clamp(v, 5)
		lr := roundTrip[*kmsg.ListGroupsResponse](c, l)
		listed := false
		for _, g := range lr.Groups {
			listed = listed || (g.Group == group && g.ProtocolType == "consumer")
		}
		if lr.ErrorCode != 0 || !listed {
			t.Fatalf("ListGroups v%d: %+v", l.Version, lr)
		}

		leave := kmsg.NewPtrLeaveGroupRequest()
		leave.Version = clamp(v, 5)
		leave.Group = group
		if leave.Version < 3 {
			leave.MemberID = id
		} else {
			leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}}
		}
		lv := roundTrip[*kmsg.LeaveGroupResponse](c, leave)
		if lv.ErrorCode != 0 || (leave.Version >= 3 && lv.Members[0].ErrorCode != 0) {
			t.Fatalf("LeaveGroup v%d: %+v", leave.Version, lv)
		}

		del := kmsg.NewPtrDeleteGroupsRequest()
		del.Version = clamp(v, 3)
		del.Groups = []string{group, group}
		delResp := roundTrip[*kmsg.DeleteGroupsResponse](c, del)
		if delResp.Groups[0].ErrorCode != 0 || kerrOf(delResp.Groups[1].ErrorCode) != kerr.GroupIDNotFound {
			t.Fatalf("DeleteGroups v%d: %+v", del.Version, delResp)
		}
	}
	// Describing a group that does not exist: "Dead" before v6, an error from v6.
	for _, v := range []int16{5, 6} {
		d := kmsg.NewPtrDescribeGroupsRequest()
		d.Version = v
		d.Groups = []string{"nobody"}
		dg := roundTrip[*kmsg.DescribeGroupsResponse](c, d).Groups[0]
		if (v < 6 && (dg.ErrorCode != 0 || dg.State != "Dead")) || (v >= 6 && kerrOf(dg.ErrorCode) != kerr.GroupIDNotFound) {
			t.Fatalf("DescribeGroups v%d of a missing group: %+v", v, dg)
		}
	}
}

func TestGroupPartitionMatchesKafka(t *testing.T) {
	// Java: "foo".hashCode() == 101574; "polygenelubricants" hashes to
	// Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0.
	cases := []struct {
		group string
		hash  int32
		want  int32
	}{
		{"foo", 101574, 101574 % 50},
		{"polygenelubricants", -2147483648, 0},
		{"zzzzzzzz", -1910022912, 1910022912 % 50}, // abs, not the sign bit masked off
	}
	for _, c := range cases {
		if h := javaStringHashCode(c.group); h != c.hash {
			t.Fatalf("hash of %q = %d, want %d", c.group, h, c.hash)
		}
		if p := groupPartition(c.group, 50); p != c.want {
			t.Fatalf("partition of %q = %d, want %d", c.group, p, c.want)
		}
	}
	// Characters outside the BMP count as two UTF-16 units, as in Java.
	if javaStringHashCode("𝄞") != 31*0xD834+0xDD1E {
		t.Fatalf("surrogate pair hashed as %d", javaStringHashCode("𝄞"))
	}
}

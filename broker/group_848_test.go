package broker

// End-to-end KIP-848 consumer groups with franz-go's ServerSideBalancer:
// the coordinator assigns, members reconcile through heartbeats, and no
// partition is ever owned by two members at once.

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// start848Broker serves the consumer protocol with fast heartbeats.
func start848Broker(t *testing.T) *testBroker {
	t.Helper()
	return startGroupTestBroker(t, func(c *Config) {
		c.GroupConsumerProtocolEnable = true
		c.GroupConsumerHeartbeatIntervalMs = 100
		c.GroupConsumerSessionTimeoutMs = 6000
	})
}

// watchExclusiveOwnership samples the group until stop closes and records
// any moment at which a partition was assigned to two members.
func watchExclusiveOwnership(t *testing.T, tb *testBroker, group, topic string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	var doubles []string
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			if snap, ok := findGroupSnapshot(tb, group); ok {
				owner := map[int32]string{}
				for _, m := range snap.Members {
					for _, p := range m.Assigned[topic] {
						if prev, dup := owner[p]; dup {
							doubles = append(doubles, prev+"+"+m.ClientID)
						}
						owner[p] = m.ClientID
					}
				}
			}
			time.Sleep(2 * time.Millisecond) // sampling rate, not synchronisation
		}
	}()
	return func() {
		close(done)
		<-finished
		if len(doubles) > 0 {
			t.Errorf("partitions owned by two members at once: %v", doubles)
		}
	}
}

func TestConsumerProtocolSplitTakeOverAndRebalance(t *testing.T) {
	for _, b := range []struct {
		name string
		opt  kgo.Opt
	}{
		{"range", kgo.Balancers(kgo.RangeBalancer())},
		{"uniform", kgo.Balancers(kgo.StickyBalancer())},
	} {
		t.Run(b.name, func(t *testing.T) {
			const partitions = 6
			tb := start848Broker(t)
			topic, group := "orders-848-"+b.name, "workers-848-"+b.name
			tb.createTopic(topic, partitions, nil)
			ledger := newConsumeLedger()
			stopWatch := watchExclusiveOwnership(t, tb, group, topic)
			defer stopWatch()
			opts := []kgo.Opt{kgo.ServerSideBalancer(), b.opt}
			total := 0

			ends := produceSpread(t, tb, topic, partitions, 300)
			total += 300
			m1 := startGroupMember(t, tb, "m1", group, topic, ledger, opts...)
			m2 := startGroupMember(t, tb, "m2", group, topic, ledger, opts...)
			m3 := startGroupMember(t, tb, "m3", group, topic, ledger, opts...)
			waitForBalance(t, tb, group, topic, partitions, m1, m2, m3)
			waitFor(t, 30*time.Second, "the first batch", func() bool { return ledger.count() == total })
			waitCommitted(t, tb, group, topic, ends)
			if snap, _ := findGroupSnapshot(tb, group); snap.ProtocolType != "consumer" || snap.Protocol != "" {
				t.Fatalf("group %+v is not a consumer-protocol group", snap)
			}

			m3.stop()
			waitForBalance(t, tb, group, topic, partitions, m1, m2)
			ends = produceSpread(t, tb, topic, partitions, 300)
			total += 300
			waitFor(t, 30*time.Second, "the second batch", func() bool { return ledger.count() == total })
			waitCommitted(t, tb, group, topic, ends)

			m4 := startGroupMember(t, tb, "m4", group, topic, ledger, opts...)
			waitForBalance(t, tb, group, topic, partitions, m1, m2, m4)
			ends = produceSpread(t, tb, topic, partitions, 300)
			total += 300
			waitFor(t, 30*time.Second, "the third batch", func() bool { return ledger.count() == total })
			waitCommitted(t, tb, group, topic, ends)

			ledger.check(t, ends)
		})
	}
}

// TestConsumerProtocolResumesAfterRestart: a new member resumes exactly
// from the commits after a restart, and a member that keeps running across
// a restart goes on.
func TestConsumerProtocolResumesAfterRestart(t *testing.T) {
	const partitions = 3
	tb := start848Broker(t)
	topic, group := "resume-848", "resumers-848"
	tb.createTopic(topic, partitions, nil)
	opts := []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer())}
	first := newConsumeLedger()
	ends := produceSpread(t, tb, topic, partitions, 90)
	m := startGroupMember(t, tb, "first", group, topic, first, opts...)
	waitFor(t, 30*time.Second, "the first batch", func() bool { return first.count() == 90 })
	waitCommitted(t, tb, group, topic, ends)
	m.stop()

	tb.restart()
	ends = produceSpread(t, tb, topic, partitions, 90)
	second := newConsumeLedger()
	startGroupMember(t, tb, "second", group, topic, second, opts...)
	waitFor(t, 30*time.Second, "the second batch", func() bool { return second.count() == 90 })
	waitCommitted(t, tb, group, topic, ends)
	second.mu.Lock()
	for p, offs := range second.seen {
		for o, n := range offs {
			if o < 30 || n != 1 {
				t.Errorf("partition %d offset %d consumed %d times after the restart", p, o, n)
			}
		}
	}
	second.mu.Unlock()

	// The second member keeps running across another restart.
	tb.restart()
	ends = produceSpread(t, tb, topic, partitions, 90)
	waitFor(t, 30*time.Second, "the third batch", func() bool { return second.count() == 180 })
	waitCommitted(t, tb, group, topic, ends)
	if snap, ok := findGroupSnapshot(tb, group); !ok || len(snap.Members) != 1 || snap.ProtocolType != "consumer" {
		t.Fatalf("after the second restart: %+v", snap)
	}
}

// TestConsumerProtocolMembersSurviveRestart: the consumer group's state is
// persisted, so members that keep running across coordinator restarts stay
// members at their epochs — no UNKNOWN_MEMBER_ID, no lost partitions, no
// rejoin — and, committing after each poll, process every record exactly
// once.
func TestConsumerProtocolMembersSurviveRestart(t *testing.T) {
	const partitions = 6
	tb := start848Broker(t)
	topic, group := "survive-848", "survivors-848"
	tb.createTopic(topic, partitions, nil)
	opts := []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer())}
	ledger := newConsumeLedger()
	members := []*groupMember{
		startGroupMember(t, tb, "m1", group, topic, ledger, opts...),
		startGroupMember(t, tb, "m2", group, topic, ledger, opts...),
		startGroupMember(t, tb, "m3", group, topic, ledger, opts...),
	}
	waitForBalance(t, tb, group, topic, partitions, members...)
	total := 300
	ends := produceSpread(t, tb, topic, partitions, total)
	waitFor(t, 30*time.Second, "the first batch", func() bool { return ledger.count() == total })
	waitCommitted(t, tb, group, topic, ends)

	before, _ := findGroupSnapshot(tb, group)
	revoked := make([]int, len(members))
	for i, m := range members {
		revoked[i] = m.revokedCount()
	}
	memberIDs := func(s groupSnapshot) []string {
		var ids []string
		for _, m := range s.Members {
			ids = append(ids, m.MemberID+"/"+m.ClientID)
		}
		slices.Sort(ids)
		return ids
	}

	for round := range 2 {
		// Restart while the members are busy with records not all
		// committed yet.
		ends = produceSpread(t, tb, topic, partitions, 300)
		total += 300
		tb.restart()
		ends = produceSpread(t, tb, topic, partitions, 150)
		total += 150
		waitFor(t, 30*time.Second, "the batches around the restart", func() bool { return ledger.count() == total })
		waitCommitted(t, tb, group, topic, ends)
		after, ok := findGroupSnapshot(tb, group)
		if !ok || after.State != "Stable" || after.Generation != before.Generation || !slices.Equal(memberIDs(after), memberIDs(before)) {
			t.Fatalf("round %d: group before the restart %+v, after %+v", round, before, after)
		}
	}
	for i, m := range members {
		if got := m.revokedCount(); got != revoked[i] {
			t.Errorf("%s lost or revoked %d partitions across the restarts", m.name, got-revoked[i])
		}
	}
	ledger.check(t, ends)
}

func TestConsumerProtocolAdvertisedOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		tb := startTestBroker(t, func(c *Config) { c.GroupConsumerProtocolEnable = enabled })
		cl := tb.client()
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(testContext(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int16]bool{}
		for _, k := range resp.ApiKeys {
			got[k.ApiKey] = true
		}
		for _, key := range []kmsg.Key{kmsg.ConsumerGroupHeartbeat, kmsg.ConsumerGroupDescribe} {
			if got[key.Int16()] != enabled {
				t.Errorf("enabled=%v: %s advertised=%v", enabled, key.Name(), got[key.Int16()])
			}
		}
	}
}

func TestConsumerProtocolDoesNotMixWithClassic(t *testing.T) {
	tb := start848Broker(t)
	tb.createTopic("mix", 2, nil)
	cl := tb.client()
	ctx := testContext(t)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = "mixed", "member-1", 0
	hb.RebalanceTimeoutMillis = 5000
	hb.SubscribedTopicNames = []string{"mix"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	hresp, err := hb.RequestWith(ctx, cl)
	if err != nil || hresp.ErrorCode != 0 || hresp.MemberEpoch <= 0 || hresp.Assignment == nil || len(hresp.Assignment.Topics) != 1 {
		t.Fatalf("join: %+v, %v", hresp, err)
	}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType = "mixed", "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0}}}
	jresp, err := join.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if jresp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic JoinGroup to a consumer group: %v", kerr.ErrorForCode(jresp.ErrorCode))
	}
	desc := kmsg.NewPtrConsumerGroupDescribeRequest()
	desc.Groups = []string{"mixed"}
	dresp, err := desc.RequestWith(ctx, cl)
	if err != nil || len(dresp.Groups) != 1 || dresp.Groups[0].ErrorCode != 0 || len(dresp.Groups[0].Members) != 1 || dresp.Groups[0].State != "Stable" {
		t.Fatalf("describe: %+v, %v", dresp, err)
	}
	list := kmsg.NewPtrListGroupsRequest()
	lresp, err := list.RequestWith(ctx, cl)
	if err != nil || len(lresp.Groups) != 1 || lresp.Groups[0].GroupType != "consumer" {
		t.Fatalf("list: %+v, %v", lresp, err)
	}
	// Leaving empties the group; a classic member may then take it over.
	hb.MemberEpoch = -1
	if hresp, err = hb.RequestWith(ctx, cl); err != nil || hresp.ErrorCode != 0 {
		t.Fatalf("leave: %+v, %v", hresp, err)
	}
}

func TestConsumerProtocolProperties(t *testing.T) {
	c := DefaultConfig()
	if !c.GroupConsumerProtocolEnable || c.GroupConsumerHeartbeatIntervalMs != 5000 || c.GroupConsumerSessionTimeoutMs != 45000 || c.GroupConsumerAssignor != "uniform" {
		t.Fatalf("defaults: %+v", c)
	}
	for k, v := range map[string]string{
		"group.consumer.protocol.enable":       "false",
		"group.consumer.heartbeat.interval.ms": "100",
		"group.consumer.session.timeout.ms":    "6000",
		"group.consumer.assignors":             "range, uniform",
	} {
		if err := c.Set(k, v); err != nil {
			t.Fatalf("%s=%s: %v", k, v, err)
		}
	}
	if c.GroupConsumerProtocolEnable || c.GroupConsumerHeartbeatIntervalMs != 100 || c.GroupConsumerSessionTimeoutMs != 6000 || c.GroupConsumerAssignor != "range" {
		t.Fatalf("after Set: %+v", c)
	}
	if err := c.Set("group.consumer.assignors", "org.apache.kafka.coordinator.group.assignor.UniformAssignor"); err == nil {
		t.Fatal("a class name was accepted")
	}
}

// TestConsumerGroupStaysAfterLastMemberLeaves: as in Kafka, a KIP-848
// group whose last member left stays, Empty, listed and deletable, rather
// than vanishing at once (confluent-kafka-go's DeleteConsumerGroups test
// got GROUP_ID_NOT_FOUND).
func TestConsumerGroupStaysAfterLastMemberLeaves(t *testing.T) {
	tb := start848Broker(t)
	tb.createTopic("leave", 1, nil)
	cl := tb.client()
	ctx := testContext(t)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = "left", "member-1", 0
	hb.RebalanceTimeoutMillis = 5000
	hb.SubscribedTopicNames = []string{"leave"}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if hresp, err := hb.RequestWith(ctx, cl); err != nil || hresp.ErrorCode != 0 || hresp.MemberEpoch <= 0 {
		t.Fatalf("join: %+v, %v", hresp, err)
	}
	hb.MemberEpoch = -1
	if hresp, err := hb.RequestWith(ctx, cl); err != nil || hresp.ErrorCode != 0 {
		t.Fatalf("leave: %+v, %v", hresp, err)
	}
	for _, when := range []string{"after the last member left", "after a restart"} {
		if when == "after a restart" {
			tb.restart()
			cl = tb.client()
		}
		listed, err := kadm.NewClient(cl).ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		g, ok := listed["left"]
		if !ok || g.State != "Empty" || g.GroupType != "consumer" {
			t.Fatalf("%s, ListGroups has %+v (found %v); want the group, Empty, type consumer", when, g, ok)
		}
	}
	adm := kadm.NewClient(cl)
	deleted, err := adm.DeleteGroups(ctx, "left")
	if err != nil || deleted["left"].Err != nil {
		t.Fatalf("DeleteGroups: %v %v", err, deleted["left"].Err)
	}
	if listed, err := adm.ListGroups(ctx); err != nil || len(listed) != 0 {
		t.Fatalf("after DeleteGroups: %v %v", listed, err)
	}
	if deleted, err = adm.DeleteGroups(ctx, "left"); err != nil || !errors.Is(deleted["left"].Err, kerr.GroupIDNotFound) {
		t.Fatalf("second DeleteGroups: %v %v, want GROUP_ID_NOT_FOUND", err, deleted["left"].Err)
	}
}

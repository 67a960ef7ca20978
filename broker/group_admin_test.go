package broker

// Group administration through kadm (offsets, list, describe, delete), the
// offsets retention, restarts and shutdown with requests waiting.

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestGroupOffsetsThroughKadm(t *testing.T) {
	tb := startGroupTestBroker(t)
	tb.createTopic("t", 3, nil)
	tb.createTopic("u", 1, nil)
	adm := tb.admin()
	ctx := testContext(t)

	// Commits with no group membership (generation -1): kadm, kcat and
	// the like store offsets this way.
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 10, LeaderEpoch: 0, Metadata: "first"})
	os.Add(kadm.Offset{Topic: "t", Partition: 2, At: 12, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "u", Partition: 0, At: 5, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "nope", Partition: 0, At: 1, LeaderEpoch: -1})
	committed, err := adm.CommitOffsets(ctx, "admin-group", os)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := committed.Lookup("nope", 0); r.Err != kerr.UnknownTopicOrPartition {
		t.Fatalf("commit to a missing topic: %v", r.Err)
	}
	if r, _ := committed.Lookup("t", 0); r.Err != nil {
		t.Fatalf("commit: %v", r.Err)
	}
	if err := adm.CommitAllOffsets(ctx, "other-group", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 1, Offset: 41})); err != nil {
		t.Fatal(err)
	}

	fetched, err := adm.FetchOffsets(ctx, "admin-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := fetched.Lookup("t", 0); !ok || o.At != 10 || o.Metadata != "first" || o.LeaderEpoch != 0 {
		t.Fatalf("t-0: %+v %v", o, ok)
	}
	if _, ok := fetched.Lookup("t", 1); ok {
		t.Fatal("t-1 was never committed")
	}
	// Several groups in one request (OffsetFetch v8+).
	many := adm.FetchManyOffsets(ctx, "admin-group", "other-group", "nobody")
	if err := many.Error(); err != nil {
		t.Fatal(err)
	}
	if o, _ := many["other-group"].Fetched.Lookup("t", 1); o.At != 42 {
		t.Fatalf("other-group t-1: %+v", o)
	}
	if len(many["nobody"].Fetched) != 0 {
		t.Fatalf("a group that does not exist has offsets: %+v", many["nobody"].Fetched)
	}

	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := listed["admin-group"]; !ok || g.State != "Empty" || g.ProtocolType != "" {
		t.Fatalf("listed %+v", listed)
	}
	if stable, _ := adm.ListGroups(ctx, "Stable"); len(stable) != 0 {
		t.Fatalf("states filter: %+v", stable)
	}

	// OffsetDelete on an Empty group deletes anything.
	var del kadm.TopicsSet
	del.Add("u", 0)
	dr, err := adm.DeleteOffsets(ctx, "admin-group", del)
	if err != nil || dr.Error() != nil {
		t.Fatalf("delete offsets: %v %v", err, dr.Error())
	}
	fetched, _ = adm.FetchOffsets(ctx, "admin-group")
	if _, ok := fetched.Lookup("u", 0); ok {
		t.Fatal("u-0 survived OffsetDelete")
	}

	deleted, err := adm.DeleteGroups(ctx, "admin-group", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if deleted["admin-group"].Err != nil || deleted["nobody"].Err != kerr.GroupIDNotFound {
		t.Fatalf("delete groups: %+v", deleted)
	}
	fetched, _ = adm.FetchOffsets(ctx, "admin-group")
	if len(fetched) != 0 {
		t.Fatalf("offsets after the group was deleted: %+v", fetched)
	}

	// Deletions are durable: the tombstones are replayed at restart.
	tb.restart()
	adm = tb.admin()
	waitFor(t, 10*time.Second, "the coordinator to load", func() bool {
		_, err := adm.FetchOffsets(ctx, "other-group")
		return err == nil
	})
	fetched, _ = adm.FetchOffsets(ctx, "admin-group")
	other, _ := adm.FetchOffsets(ctx, "other-group")
	if len(fetched) != 0 {
		t.Fatalf("deleted group came back: %+v", fetched)
	}
	if o, _ := other.Lookup("t", 1); o.At != 42 {
		t.Fatalf("other-group after restart: %+v", other)
	}
}

func TestGroupDescribeAndDeleteActiveGroup(t *testing.T) {
	tb := startGroupTestBroker(t)
	tb.createTopic("t", 2, nil)
	ledger := newConsumeLedger()
	m := startGroupMember(t, tb, "describer", "described", "t", ledger)
	waitForBalance(t, tb, "described", "t", 2, m)
	adm := tb.admin()
	ctx := testContext(t)

	described, err := adm.DescribeGroups(ctx, "described")
	if err != nil {
		t.Fatal(err)
	}
	g := described["described"]
	if g.State != "Stable" || g.ProtocolType != "consumer" || g.Protocol != "cooperative-sticky" || len(g.Members) != 1 {
		t.Fatalf("described %+v", g)
	}
	member := g.Members[0]
	assigned, _ := member.Assigned.AsConsumer()
	if member.ClientID != "describer" || member.ClientHost != "/127.0.0.1" || assigned == nil || len(assigned.Topics) != 1 || len(assigned.Topics[0].Partitions) != 2 {
		t.Fatalf("member %+v assigned %+v", member, assigned)
	}
	// kadm lists classic groups by type (ListGroups v5).
	all, err := adm.DescribeGroups(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("describe all: %v %+v", err, all)
	}

	if r, _ := adm.DeleteGroup(ctx, "described"); r.Err != kerr.NonEmptyGroup {
		t.Fatalf("deleting an active group: %v", r.Err)
	}
	m.stop()
	waitFor(t, 10*time.Second, "the group to empty", func() bool {
		s, _ := findGroupSnapshot(tb, "described")
		return s.State == "Empty"
	})
	if r, err := adm.DeleteGroup(ctx, "described"); err != nil || r.Err != nil {
		t.Fatalf("deleting the empty group: %v %v", err, r.Err)
	}
}

func TestOffsetsRetentionExpiresEmptyGroups(t *testing.T) {
	tb := startGroupTestBroker(t, func(c *Config) {
		c.OffsetsRetentionMs = 300
		c.OffsetsRetentionCheckIntervalMs = 20
	})
	tb.createTopic("t", 1, nil)
	adm := tb.admin()
	ctx := testContext(t)
	if err := adm.CommitAllOffsets(ctx, "short-lived", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 9})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the offsets to expire", func() bool {
		listed, err := adm.ListGroups(ctx)
		return err == nil && len(listed) == 0
	})
	tb.restart()
	adm = tb.admin()
	waitFor(t, 10*time.Second, "the coordinator to load", func() bool {
		_, err := adm.FetchOffsets(ctx, "short-lived")
		return err == nil
	})
	if fetched, _ := adm.FetchOffsets(ctx, "short-lived"); len(fetched) != 0 {
		t.Fatalf("expired offsets came back after a restart: %+v", fetched)
	}
}

func TestTopicDeletionRemovesCommittedOffsets(t *testing.T) {
	tb := startGroupTestBroker(t)
	tb.createTopic("doomed", 1, nil)
	adm := tb.admin()
	ctx := testContext(t)
	if err := adm.CommitAllOffsets(ctx, "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "doomed", Partition: 0, Offset: 3})); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DeleteTopics(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	tb.createTopic("doomed", 1, nil)
	if fetched, _ := adm.FetchOffsets(ctx, "g"); len(fetched) != 0 {
		t.Fatalf("offsets of the deleted topic survive: %+v", fetched)
	}
}

// TestShutdownAnswersWaitingJoin: a JoinGroup waiting for a rebalance
// does not hold up Close, and is answered.
func TestShutdownAnswersWaitingJoin(t *testing.T) {
	tb := startGroupTestBroker(t, func(c *Config) { c.GroupInitialRebalanceDelayMs = 60000 })
	c := tb.dialRaw()
	first := roundTrip[*kmsg.JoinGroupResponse](c, joinGroupReq(9, "waiting", "", nil, nil))
	join := joinGroupReq(9, "waiting", first.MemberID, nil, nil)
	corr := c.send(join)
	waitFor(t, 10*time.Second, "the join to wait", func() bool {
		s, ok := findGroupSnapshot(tb, "waiting")
		return ok && s.State == "PreparingRebalance"
	})
	start := time.Now()
	tb.stop()
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("Close took %v with a JoinGroup waiting", took)
	}
	resp, err := c.readResponse(join, corr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "waiting join at shutdown", resp.(*kmsg.JoinGroupResponse).ErrorCode, kerr.NotCoordinator)
}

// TestGroupShardReload: a coordinator partition that is given up answers
// NOT_COORDINATOR (its waiting requests too), and when taken back its
// groups are rebuilt from the log — what a leadership move will do.
func TestGroupShardReload(t *testing.T) {
	tb := startGroupTestBroker(t)
	tb.createTopic("t", 1, nil)
	c := tb.dialRaw()
	const group = "moving"
	jr := joinNew(t, c, group, nil, consumerSubscription("t"))
	roundTrip[*kmsg.SyncGroupResponse](c, syncGroupReq(5, group, jr.MemberID, 1, map[string][]byte{jr.MemberID: []byte("a")}))
	wantCode(t, "commit", commitErrCode(t, c, commitReq(9, group, jr.MemberID, 1, "t", 0, 77)), nil)

	sh, _ := tb.srv.groups.shardFor(group)
	sh.unload(shardUnloaded)
	wantCode(t, "heartbeat to a former coordinator", roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq(4, group, jr.MemberID, 1)).ErrorCode, kerr.NotCoordinator)

	sh.mu.Lock()
	sh.mu.state = shardLoading
	sh.mu.Unlock()
	sh.startLoad()
	waitFor(t, 10*time.Second, "the partition to load", func() bool {
		return kerrOf(roundTrip[*kmsg.HeartbeatResponse](c, heartbeatReq(4, group, jr.MemberID, 1)).ErrorCode) == nil
	})
	// The member was restored with its generation, and the offsets.
	got, err := tb.srv.groups.fetchOffsets(group, nil, false)
	if err != nil || len(got) != 1 || got[0].Offset != 77 {
		t.Fatalf("offsets after reload: %+v %v", got, err)
	}
	s, _ := findGroupSnapshot(tb, group)
	if s.State != "Stable" || s.Generation != 1 || len(s.Members) != 1 || string(s.Members[0].MemberID) != jr.MemberID {
		t.Fatalf("reloaded group %+v", s)
	}
}

package groups

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func offset(topic string, partition int32, at int64) CommitOffset {
	return CommitOffset{
		TopicPartition:    TopicPartition{Topic: topic, Partition: partition},
		OffsetAndMetadata: OffsetAndMetadata{Offset: at, LeaderEpoch: -1, ExpireTimestamp: -1},
	}
}

func (s *scenario) commitAt(o CommitOffset) CommitOffset {
	o.CommitTimestamp = s.now.UnixMilli()
	return o
}

func TestSimpleCommitsOnlyWhileEmpty(t *testing.T) {
	s := newScenario(t)
	simple := CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 10))}}
	wantErr(t, "simple commit", s.commit(simple), nil)
	if o, ok := s.g.Offset(TopicPartition{"t", 0}); !ok || o.Offset != 10 {
		t.Fatalf("offset %+v %v", o, ok)
	}
	if s.g.ProtocolType() != "" || s.g.State() != Empty {
		t.Fatal("an offsets-only group stays Empty without a protocol type")
	}
	s.stableGroup(1, nil)
	wantErr(t, "simple commit to an active group", s.commit(simple), kerr.UnknownMemberID)
	wantErr(t, "commit by a stranger", s.commit(CommitRequest{MemberID: "x", Generation: 1}), kerr.UnknownMemberID)
}

func TestCommitRecordsAndReplay(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(2, consumerMeta("t"))
	wantErr(t, "commit", s.commit(CommitRequest{MemberID: ids[0], Generation: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 7)), s.commitAt(offset("t", 1, 9))}}), nil)

	// Replaying every record in order rebuilds the group.
	r := New("group", &s.cfg, s.now)
	for _, rec := range s.records {
		key, value := EncodeRecord(rec)
		back, known, err := DecodeRecord(key, value)
		if err != nil || !known {
			t.Fatalf("decode: %v %v", known, err)
		}
		if back.IsOffset {
			r.ReplayOffset(back.TopicPartition, back.Offset)
		} else {
			r.ReplayMetadata(s.now, back.Metadata)
		}
	}
	if r.State() != Stable || r.Generation() != 1 || r.NumMembers() != 2 || r.Leader() != s.g.Leader() || r.Protocol() != "range" {
		t.Fatalf("replayed %s gen %d members %d leader %s", r.State(), r.Generation(), r.NumMembers(), r.Leader())
	}
	if got := r.Offsets(); len(got) != 2 || got[1].Offset != 9 {
		t.Fatalf("replayed offsets %+v", got)
	}
	// Restored members keep heartbeating with their generation…
	if err, _ := r.Heartbeat(s.now, ids[1], nil, 1); err != nil {
		t.Fatal(err)
	}
	// …and a restored member that is gone expires and is rebalanced away.
	later := s.now.Add(testSession)
	if err, _ := r.Heartbeat(later.Add(-time.Millisecond), ids[0], nil, 1); err != nil {
		t.Fatal(err)
	}
	r.Tick(later)
	if r.State() != PreparingRebalance || r.NumMembers() != 1 {
		t.Fatalf("after expiry %s with %d members", r.State(), r.NumMembers())
	}
}

func TestReplayTombstoneResetsMembershipKeepsOffsets(t *testing.T) {
	s := newScenario(t)
	s.stableGroup(1, nil)
	g := New("group", &s.cfg, s.now)
	g.ReplayOffset(TopicPartition{"t", 0}, &OffsetAndMetadata{Offset: 3, ExpireTimestamp: -1})
	md := s.g.metadata(s.now)
	g.ReplayMetadata(s.now, &md)
	g.ReplayMetadata(s.now, nil)
	if g.State() != Empty || g.Generation() != 0 || g.NumMembers() != 0 || g.NumOffsets() != 1 {
		t.Fatalf("after tombstone: %s gen %d members %d offsets %d", g.State(), g.Generation(), g.NumMembers(), g.NumOffsets())
	}
}

func TestExpireOffsetsOfEmptyGroup(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(1, consumerMeta("t"))
	s.commit(CommitRequest{MemberID: ids[0], Generation: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1))}})
	retention := time.Hour
	// Active groups keep subscribed offsets however old.
	s.heartbeatFor(2*retention, 1, ids[0])
	s.wantState(Stable)
	s.collect(s.g.ExpireOffsets(s.now, retention))
	if s.g.NumOffsets() != 1 {
		t.Fatal("a Stable group's subscribed offsets must not expire")
	}
	s.leave(ids[0])
	s.wantState(Empty)
	// Retention counts from when the group became Empty.
	s.advance(retention - time.Second)
	s.collect(s.g.ExpireOffsets(s.now, retention))
	if s.g.NumOffsets() != 1 {
		t.Fatal("expired too early")
	}
	n := len(s.records)
	s.advance(time.Second)
	s.collect(s.g.ExpireOffsets(s.now, retention))
	s.wantState(Dead)
	got := s.records[n:]
	if len(got) != 2 || !got[0].IsOffset || got[0].Offset != nil || got[1].IsOffset || got[1].Metadata != nil {
		t.Fatalf("want an offset tombstone then a group tombstone, got %+v", got)
	}
}

func TestExpireUnsubscribedOffsetsOfStableConsumerGroup(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(1, consumerMeta("t"))
	s.commit(CommitRequest{MemberID: ids[0], Generation: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1)), s.commitAt(offset("old", 0, 1))}})
	s.heartbeatFor(time.Hour, 1, ids[0])
	s.wantState(Stable)
	s.collect(s.g.ExpireOffsets(s.now, time.Hour))
	if _, ok := s.g.Offset(TopicPartition{"old", 0}); ok {
		t.Fatal("offset of an unsubscribed topic survived retention")
	}
	if _, ok := s.g.Offset(TopicPartition{"t", 0}); !ok {
		t.Fatal("offset of a subscribed topic expired")
	}
}

func TestExpireSimpleGroupOffsetsByCommitTime(t *testing.T) {
	s := newScenario(t)
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1))}})
	s.advance(30 * time.Minute)
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 1, 1))}})
	s.advance(30 * time.Minute)
	s.collect(s.g.ExpireOffsets(s.now, time.Hour))
	if s.g.NumOffsets() != 1 {
		t.Fatalf("offsets %+v", s.g.Offsets())
	}
	// An explicit retention (OffsetCommit v2–v4) sets its own expiry.
	o := s.commitAt(offset("t", 2, 1))
	o.ExpireTimestamp = s.now.Add(time.Minute).UnixMilli()
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{o}})
	s.advance(time.Minute)
	s.collect(s.g.ExpireOffsets(s.now, time.Hour))
	if _, ok := s.g.Offset(TopicPartition{"t", 2}); ok {
		t.Fatal("offset with an expire timestamp outlived it")
	}
}

func TestDeleteGroup(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(1, nil)
	s.commit(CommitRequest{MemberID: ids[0], Generation: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1))}})
	err, _ := s.g.Delete(s.now)
	wantErr(t, "delete active group", err, kerr.NonEmptyGroup)
	s.leave(ids[0])
	n := len(s.records)
	err, eff := s.g.Delete(s.now)
	s.collect(eff)
	wantErr(t, "delete empty group", err, nil)
	s.wantState(Dead)
	if len(s.records)-n != 2 {
		t.Fatalf("tombstones %+v", s.records[n:])
	}
	err, _ = s.g.Delete(s.now)
	wantErr(t, "delete dead group", err, kerr.GroupIDNotFound)
	s.join("late", joinReq("", nil))
	wantErr(t, "join dead group", s.joined("late").Err, kerr.CoordinatorNotAvailable)
}

func TestDeleteOffsets(t *testing.T) {
	s := newScenario(t)
	ids := s.stableGroup(1, consumerMeta("t"))
	s.commit(CommitRequest{MemberID: ids[0], Generation: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1)), s.commitAt(offset("u", 0, 1))}})
	top, errs, eff := s.g.DeleteOffsets(s.now, []TopicPartition{{"t", 0}, {"u", 0}, {"v", 0}})
	s.collect(eff)
	if top != nil || errs[0] != kerr.GroupSubscribedToTopic || errs[1] != nil || errs[2] != nil {
		t.Fatalf("errors %v %v", top, errs)
	}
	if s.g.NumOffsets() != 1 {
		t.Fatal("unsubscribed offset not deleted")
	}
	last := s.records[len(s.records)-1]
	if !last.IsOffset || last.TopicPartition.Topic != "u" || last.Offset != nil {
		t.Fatalf("want a tombstone for u-0, got %+v", last)
	}
}

func TestRemoveTopicOffsets(t *testing.T) {
	s := newScenario(t)
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1)), s.commitAt(offset("t", 1, 1))}})
	s.collect(s.g.RemoveTopicOffsets(s.now, "t"))
	s.wantState(Dead)
}

package groups

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// txnLogEntry is one entry of a __consumer_offsets partition as the
// broker would write it: a record outside a transaction (producerID -1),
// a record of a transactional batch, or a transaction marker.
type txnLogEntry struct {
	producerID int64
	record     Record
	marker     bool
	commit     bool
}

// txnScenario is a scenario that also keeps the log, transactional
// batches and markers included, to check that replaying it rebuilds the
// group.
type txnScenario struct {
	*scenario
	log    []txnLogEntry
	logged int // s.records already in log
}

func newTxnScenario(t *testing.T) *txnScenario {
	return &txnScenario{scenario: newScenario(t)}
}

// flushPlain moves the records collected so far into the log.
func (s *txnScenario) flushPlain() {
	for _, r := range s.records[s.logged:] {
		s.log = append(s.log, txnLogEntry{producerID: -1, record: r})
	}
	s.logged = len(s.records)
}

// txnCommit runs a TxnOffsetCommit and logs its records: the plain ones,
// then the transactional batch.
func (s *txnScenario) txnCommit(req TxnCommitRequest) []*kerr.Error {
	s.t.Helper()
	s.flushPlain()
	errs, txnRecords, eff := s.g.TxnCommit(s.now, req)
	if len(errs) != len(req.Offsets) {
		s.t.Fatalf("%d errors for %d offsets", len(errs), len(req.Offsets))
	}
	for i := range errs {
		if errs[i] != errs[0] {
			s.t.Fatalf("errors differ across partitions: %v", errs)
		}
	}
	if (errs[0] == nil) != (len(txnRecords) == len(req.Offsets)) {
		s.t.Fatalf("error %v with %d transactional records", errs[0], len(txnRecords))
	}
	s.collect(eff)
	s.flushPlain()
	for _, r := range txnRecords {
		s.log = append(s.log, txnLogEntry{producerID: req.ProducerID, record: r})
	}
	return errs
}

// marker writes a transaction marker and applies it.
func (s *txnScenario) marker(producerID int64, commit bool) {
	s.t.Helper()
	s.flushPlain()
	s.log = append(s.log, txnLogEntry{producerID: producerID, marker: true, commit: commit})
	eff := s.g.CompleteTxnOffsets(s.now, producerID, commit)
	if len(eff.Records) != 0 {
		s.t.Fatalf("completion of a classic group's transaction wrote %+v", eff.Records)
	}
	s.collect(eff)
}

// replayed rebuilds the group from the log, each record encoded and
// decoded as the broker does.
func (s *txnScenario) replayed() *Group {
	s.t.Helper()
	s.flushPlain()
	r := New(s.g.ID(), &s.cfg, s.now)
	for _, e := range s.log {
		if e.marker {
			r.ReplayTxnMarker(e.producerID, e.commit)
			continue
		}
		back, known, err := DecodeRecord(EncodeRecord(e.record))
		if err != nil || !known {
			s.t.Fatalf("decode %+v: %v %v", e.record, known, err)
		}
		if e.producerID >= 0 {
			r.ReplayTxnOffset(e.producerID, back.TopicPartition, back.Offset)
		} else {
			r.Replay(s.now, back)
		}
	}
	return r
}

// offsetsSnapshot is the group's committed and pending offsets.
func offsetsSnapshot(g *Group) string {
	var b strings.Builder
	for _, o := range g.Offsets() {
		fmt.Fprintf(&b, "%s-%d=%d ", o.Topic, o.Partition, o.Offset)
	}
	for _, pid := range g.PendingTxnProducers() {
		pending := g.pendingTxnOffsets[pid]
		tps := make([]TopicPartition, 0, len(pending))
		for tp := range pending {
			tps = append(tps, tp)
		}
		slices.SortFunc(tps, func(a, b TopicPartition) int {
			if lessTP(a, b) {
				return -1
			}
			return 1
		})
		fmt.Fprintf(&b, "| pid %d:", pid)
		for _, tp := range tps {
			fmt.Fprintf(&b, " %s-%d=%d", tp.Topic, tp.Partition, pending[tp].Offset)
		}
	}
	return b.String()
}

func (s *txnScenario) checkReplay() *Group {
	s.t.Helper()
	r := s.replayed()
	if got, want := offsetsSnapshot(r), offsetsSnapshot(s.g); got != want {
		s.t.Fatalf("replay differs\n got: %s\nwant: %s", got, want)
	}
	return r
}

func anonymousTxn(producerID int64, offsets ...CommitOffset) TxnCommitRequest {
	return TxnCommitRequest{ProducerID: producerID, ProducerEpoch: 0, GenerationID: -1, Offsets: offsets}
}

func (s *txnScenario) wantOffset(tp TopicPartition, want int64) {
	s.t.Helper()
	o, ok := s.g.Offset(tp)
	switch {
	case want < 0 && ok:
		s.t.Fatalf("%v: committed %d, want none", tp, o.Offset)
	case want >= 0 && (!ok || o.Offset != want):
		s.t.Fatalf("%v: committed %d (%v), want %d", tp, o.Offset, ok, want)
	}
}

var t0 = TopicPartition{"t", 0}

func TestTxnOffsetsPendingUntilCommitMarker(t *testing.T) {
	s := newTxnScenario(t)
	wantErr(t, "txn commit", s.txnCommit(anonymousTxn(7, s.commitAt(offset("t", 0, 5))))[0], nil)
	s.wantOffset(t0, -1)
	if f := s.g.FetchOffsets([]TopicPartition{t0}, false)[0]; f.Err != nil || f.Offset != -1 {
		t.Fatalf("fetch sees a pending offset: %+v", f)
	}
	if !s.g.HasPendingTxnOffsets(t0) || !s.g.HasPendingTxnOffsetsFrom(7) || s.g.HasPendingTxnOffsetsFrom(8) {
		t.Fatal("pending offsets not reported")
	}
	if s.g.IsPristine() {
		t.Fatal("a group with pending offsets is pristine (the broker would drop it)")
	}
	s.checkReplay()

	s.marker(8, true) // another producer's marker changes nothing
	s.wantOffset(t0, -1)
	s.marker(7, true)
	s.wantOffset(t0, 5)
	if s.g.HasPendingTxnOffsets(t0) || len(s.g.PendingTxnProducers()) != 0 {
		t.Fatal("offsets still pending after the commit marker")
	}
	s.checkReplay()
}

func TestTxnOffsetsAbortMarkerDropsThem(t *testing.T) {
	s := newTxnScenario(t)
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 3))}})
	s.txnCommit(anonymousTxn(7, s.commitAt(offset("t", 0, 5)), s.commitAt(offset("t", 1, 5))))
	s.txnCommit(anonymousTxn(7, s.commitAt(offset("t", 1, 6)))) // same transaction, later offset
	s.checkReplay()
	s.marker(7, false)
	s.wantOffset(t0, 3)
	s.wantOffset(TopicPartition{"t", 1}, -1)
	s.checkReplay()

	// A group that held only aborted offsets holds nothing.
	s2 := newTxnScenario(t)
	s2.txnCommit(anonymousTxn(9, s2.commitAt(offset("t", 0, 5))))
	s2.marker(9, false)
	if !s2.g.IsPristine() {
		t.Fatal("group left with nothing is not pristine")
	}
}

// Kafka keeps whichever of a plain and a transactional commit was written
// last, not the one whose transaction completed last.
func TestTxnOffsetsKeepTheLaterWrittenCommit(t *testing.T) {
	s := newTxnScenario(t)
	s.txnCommit(anonymousTxn(7, s.commitAt(offset("t", 0, 5))))
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 9))}})
	s.wantOffset(t0, 9)
	r := s.checkReplay()
	s.marker(7, true)
	s.wantOffset(t0, 9) // the plain commit was written after the transaction's
	r.ReplayTxnMarker(7, true)
	if o, _ := r.Offset(t0); o.Offset != 9 {
		t.Fatalf("replayed group took the earlier transactional commit: %d", o.Offset)
	}
	s.checkReplay()

	// A transactional commit written after the plain one wins.
	s.txnCommit(anonymousTxn(7, s.commitAt(offset("t", 0, 12))))
	s.marker(7, true)
	s.wantOffset(t0, 12)

	// Two transactions on one partition: the later record wins, whatever
	// the order of the markers.
	s.txnCommit(anonymousTxn(1, s.commitAt(offset("t", 0, 20))))
	s.txnCommit(anonymousTxn(2, s.commitAt(offset("t", 0, 30))))
	s.marker(2, true)
	s.wantOffset(t0, 30)
	s.marker(1, true)
	s.wantOffset(t0, 30)
	s.checkReplay()
}

func TestTxnCommitValidation(t *testing.T) {
	s := newTxnScenario(t)
	ids := s.stableGroup(2, consumerMeta("t"))
	o := s.commitAt(offset("t", 0, 1))
	stranger, instance := "ia", "ia"
	for _, tc := range []struct {
		name string
		req  TxnCommitRequest
		want *kerr.Error
	}{
		{"v0-v2: no member, any state", TxnCommitRequest{GenerationID: -1}, nil},
		{"member and generation", TxnCommitRequest{MemberID: ids[0], GenerationID: 1}, nil},
		{"member without generation", TxnCommitRequest{MemberID: ids[0], GenerationID: -1}, kerr.IllegalGeneration},
		{"old generation", TxnCommitRequest{MemberID: ids[0], GenerationID: 0}, kerr.IllegalGeneration},
		{"future generation", TxnCommitRequest{MemberID: ids[1], GenerationID: 2}, kerr.IllegalGeneration},
		{"unknown member", TxnCommitRequest{MemberID: "x", GenerationID: 1}, kerr.UnknownMemberID},
		{"generation without member", TxnCommitRequest{GenerationID: 1}, kerr.UnknownMemberID},
		{"unknown instance", TxnCommitRequest{MemberID: ids[0], GenerationID: 1, GroupInstanceID: &stranger}, kerr.UnknownMemberID},
	} {
		tc.req.ProducerID = 7
		tc.req.Offsets = []CommitOffset{o}
		before := len(s.log)
		wantErr(t, tc.name, s.txnCommit(tc.req)[0], tc.want)
		if tc.want != nil && len(s.log) != before {
			t.Fatalf("%s: rejected commit wrote %+v", tc.name, s.log[before:])
		}
	}
	s.marker(7, false)

	// Static members: a replaced member id is fenced.
	st := newTxnScenario(t)
	a, _ := staticGroup(st.scenario, consumerMeta("t"))
	wantErr(t, "static member", st.txnCommit(TxnCommitRequest{ProducerID: 1, MemberID: a, GenerationID: 1, GroupInstanceID: &instance, Offsets: []CommitOffset{o}})[0], nil)
	st.join("a2", staticReq("", "ia", consumerMeta("t")))
	if res := st.joined("a2"); res.Err != nil {
		t.Fatalf("static rejoin: %v", res.Err)
	}
	wantErr(t, "fenced static member", st.txnCommit(TxnCommitRequest{ProducerID: 1, MemberID: a, GenerationID: 1, GroupInstanceID: &instance, Offsets: []CommitOffset{o}})[0], kerr.FencedInstanceID)

	// Unlike OffsetCommit, TxnOffsetCommit is taken while the group awaits
	// its assignment.
	cr := newTxnScenario(t)
	id := cr.newMember("a-join", consumerMeta("t"))
	cr.completeInitialDelay()
	cr.joined("a-join")
	cr.wantState(CompletingRebalance)
	wantErr(t, "plain commit in CompletingRebalance", cr.commit(CommitRequest{MemberID: id, Generation: 1, Offsets: []CommitOffset{o}}), kerr.RebalanceInProgress)
	wantErr(t, "txn commit in CompletingRebalance", cr.txnCommit(TxnCommitRequest{ProducerID: 1, MemberID: id, GenerationID: 1, Offsets: []CommitOffset{o}})[0], nil)

	// A deleted group.
	d := newTxnScenario(t)
	d.collect(func() Effects { _, eff := d.g.Delete(d.now); return eff }())
	d.wantState(Dead)
	wantErr(t, "dead group", d.txnCommit(anonymousTxn(1, o))[0], kerr.CoordinatorNotAvailable)
}

func TestTxnCommitValidationInConsumerGroup(t *testing.T) {
	s := newConsumerScenario(t, TopicInfo{Name: "t", Partitions: 2})
	res := s.join("m1", "uniform", "t")
	o := offset("t", 0, 1)
	for _, tc := range []struct {
		name string
		req  TxnCommitRequest
		want *kerr.Error
	}{
		{"no member", TxnCommitRequest{GenerationID: -1}, nil},
		{"member epoch", TxnCommitRequest{MemberID: "m1", GenerationID: res.MemberEpoch}, nil},
		{"stale epoch", TxnCommitRequest{MemberID: "m1", GenerationID: res.MemberEpoch - 1}, kerr.StaleMemberEpoch},
		{"future epoch", TxnCommitRequest{MemberID: "m1", GenerationID: res.MemberEpoch + 1}, kerr.FencedMemberEpoch},
		{"unknown member", TxnCommitRequest{MemberID: "x", GenerationID: res.MemberEpoch}, kerr.UnknownMemberID},
	} {
		tc.req.ProducerID = 3
		tc.req.Offsets = []CommitOffset{o}
		errs, _, eff := s.g.TxnCommit(s.now, tc.req)
		s.collect(eff)
		wantErr(t, tc.name, errs[0], tc.want)
	}
	// (s.collect would replay the log without its transactional records.)
	if eff := s.g.CompleteTxnOffsets(s.now, 3, true); len(eff.Records) != 0 {
		t.Fatalf("completion wrote %+v", eff.Records)
	}
	if got, ok := s.g.Offset(TopicPartition{"t", 0}); !ok || got.Offset != 1 {
		t.Fatalf("committed %+v %v", got, ok)
	}
}

func TestFetchRequireStable(t *testing.T) {
	s := newTxnScenario(t)
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 3)), s.commitAt(offset("t", 1, 4))}})
	s.txnCommit(anonymousTxn(7, s.commitAt(offset("t", 0, 5)), s.commitAt(offset("u", 0, 1))))
	u0 := TopicPartition{"u", 0}

	got := s.g.FetchOffsets([]TopicPartition{t0, {"t", 1}, u0}, false)
	if got[0].Err != nil || got[0].Offset != 3 || got[1].Offset != 4 || got[2].Err != nil || got[2].Offset != -1 {
		t.Fatalf("fetch %+v", got)
	}
	got = s.g.FetchOffsets([]TopicPartition{t0, {"t", 1}, u0}, true)
	if got[0].Err != kerr.UnstableOffsetCommit || got[0].Offset != -1 || got[1].Err != nil || got[1].Offset != 4 || got[2].Err != kerr.UnstableOffsetCommit {
		t.Fatalf("stable fetch %+v", got)
	}
	// All partitions: those with committed offsets, as Kafka lists them.
	got = s.g.FetchOffsets(nil, true)
	if len(got) != 2 || got[0].TopicPartition != t0 || got[0].Err != kerr.UnstableOffsetCommit || got[1].Err != nil {
		t.Fatalf("stable fetch of all %+v", got)
	}
	s.marker(7, true)
	got = s.g.FetchOffsets(nil, true)
	if len(got) != 3 || got[0].Err != nil || got[0].Offset != 5 || got[2].TopicPartition != u0 || got[2].Offset != 1 {
		t.Fatalf("stable fetch after commit %+v", got)
	}
}

func TestTxnOffsetsReplay(t *testing.T) {
	s := newTxnScenario(t)
	ids := s.stableGroup(2, consumerMeta("t"))
	s.commit(CommitRequest{MemberID: ids[0], Generation: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1)), s.commitAt(offset("t", 1, 1))}})
	s.txnCommit(TxnCommitRequest{ProducerID: 1, MemberID: ids[0], GenerationID: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 10))}})
	s.txnCommit(anonymousTxn(2, s.commitAt(offset("t", 1, 20)), s.commitAt(offset("t", 2, 20))))
	s.commit(CommitRequest{MemberID: ids[1], Generation: 1, Offsets: []CommitOffset{s.commitAt(offset("t", 1, 15))}})
	s.checkReplay()
	// Membership changes rewrite the group's metadata record; replaying it
	// keeps the offsets, pending ones included.
	s.leave(ids...)
	s.wantState(Empty)
	r := s.checkReplay()
	if r.State() != Empty || r.NumMembers() != 0 {
		t.Fatalf("replayed %s with %d members", r.State(), r.NumMembers())
	}
	s.marker(2, true) // t-1: the plain commit (15) came later; t-2 taken
	s.wantOffset(TopicPartition{"t", 1}, 15)
	s.wantOffset(TopicPartition{"t", 2}, 20)
	s.checkReplay()
	s.marker(1, true)
	s.wantOffset(t0, 10)
	s.checkReplay()

	// A tombstone drops pending offsets of its partition.
	s.txnCommit(anonymousTxn(3, s.commitAt(offset("v", 0, 7))))
	top, errs, eff := s.g.DeleteOffsets(s.now, []TopicPartition{{"v", 0}})
	s.collect(eff)
	if top != nil || errs[0] != nil {
		t.Fatalf("delete offsets %v %v", top, errs)
	}
	if s.g.HasPendingTxnOffsets(TopicPartition{"v", 0}) {
		t.Fatal("pending offset survived its tombstone")
	}
	s.checkReplay()
	s.marker(3, true)
	s.wantOffset(TopicPartition{"v", 0}, -1)
	s.checkReplay()
}

func TestTxnOffsetsKeepGroupsFromExpiring(t *testing.T) {
	retention := time.Hour

	// An offsets-only group: a committed offset with a transaction pending
	// on its partition does not expire, nor does the group.
	s := newTxnScenario(t)
	s.commit(CommitRequest{Generation: -1, Offsets: []CommitOffset{s.commitAt(offset("t", 0, 1)), s.commitAt(offset("t", 1, 1))}})
	s.txnCommit(anonymousTxn(7, s.commitAt(offset("t", 0, 2)), s.commitAt(offset("u", 0, 2))))
	s.advance(2 * retention)
	s.collect(s.g.ExpireOffsets(s.now, retention))
	s.wantOffset(t0, 1)
	s.wantOffset(TopicPartition{"t", 1}, -1)
	s.wantState(Empty)
	s.checkReplay()
	s.marker(7, false)
	s.collect(s.g.ExpireOffsets(s.now, retention))
	s.wantState(Dead)

	// An Empty consumer group whose only offsets are pending is kept.
	e := newTxnScenario(t)
	ids := e.stableGroup(1, consumerMeta("t"))
	e.txnCommit(TxnCommitRequest{ProducerID: 4, MemberID: ids[0], GenerationID: 1, Offsets: []CommitOffset{e.commitAt(offset("t", 0, 3))}})
	e.leave(ids[0])
	e.wantState(Empty)
	e.advance(2 * retention)
	e.collect(e.g.ExpireOffsets(e.now, retention))
	e.wantState(Empty)
	if e.g.IsPristine() {
		t.Fatal("group with pending offsets is pristine")
	}
	e.checkReplay()
	e.marker(4, true)
	e.wantOffset(t0, 3)

	// DeleteGroups deletes pending offsets too, with tombstones.
	d := newTxnScenario(t)
	d.txnCommit(anonymousTxn(5, d.commitAt(offset("t", 0, 3))))
	err, eff := d.g.Delete(d.now)
	d.collect(eff)
	wantErr(t, "delete", err, nil)
	d.wantState(Dead)
	if len(eff.Records) != 1 || !eff.Records[0].IsOffset || eff.Records[0].Offset != nil {
		t.Fatalf("want one offset tombstone, got %+v", eff.Records)
	}
	if d.g.HasPendingTxnOffsetsFrom(5) {
		t.Fatal("pending offsets survived the group's deletion")
	}
}

package share

import (
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

var t0 = time.Unix(1_700_000_000, 0)

func newTestPartition(start int64) *Partition {
	p := NewPartition(PartitionConfig{LockDuration: time.Second, DeliveryLimit: 3, MaxInFlight: 100})
	p.Initialize(start)
	return p
}

// batches10 is one batch per record, offsets from..to.
func batches(from, to int64) []Batch {
	var out []Batch
	for o := from; o <= to; o++ {
		out = append(out, Batch{BaseOffset: o, LastOffset: o})
	}
	return out
}

func TestAcquireAckAdvance(t *testing.T) {
	p := newTestPartition(10)
	got, used := p.Acquire("m1", -1, batches(10, 14), 3, false, t0)
	if want := []AcquiredRange{{10, 12, 1}}; !reflect.DeepEqual(got, want) || used != 3 {
		t.Fatalf("acquire: %v used %d, want %v used 3", got, used, want)
	}
	got2, _ := p.Acquire("m2", -1, batches(10, 14), 10, false, t0)
	if want := []AcquiredRange{{13, 14, 1}}; !reflect.DeepEqual(got2, want) {
		t.Fatalf("second member acquires the rest: %v, want %v", got2, want)
	}
	// m1 accepts 10, releases 11, rejects 12.
	if _, err := p.Acknowledge("m1", []AckBatch{{10, 12, []int8{AckAccept, AckRelease, AckReject}}}, false, t0); err != nil {
		t.Fatal(err)
	}
	if p.Start() != 11 {
		t.Fatalf("start %d, want 11 (10 accepted)", p.Start())
	}
	if st, dc := p.State(11); st != Available || dc != 1 {
		t.Fatalf("released record: %v dc %d", st, dc)
	}
	if st, _ := p.State(12); st != Archived {
		t.Fatalf("rejected record: %v", st)
	}
	off, ok := p.FetchOffset()
	if off != 11 || !ok {
		t.Fatalf("fetch offset %d %v, want 11", off, ok)
	}
	// Redelivery of 11 to m2, delivery count 2; 12 (archived) is not taken.
	got3, _ := p.Acquire("m2", -1, batches(11, 14), 10, false, t0)
	if want := []AcquiredRange{{11, 11, 2}}; !reflect.DeepEqual(got3, want) {
		t.Fatalf("redelivery: %v, want %v", got3, want)
	}
	if _, err := p.Acknowledge("m2", []AckBatch{{11, 11, []int8{AckAccept}}, {13, 14, []int8{AckAccept}}}, false, t0); err != nil {
		t.Fatal(err)
	}
	if p.Start() != 15 || p.End() != 15 {
		t.Fatalf("start %d end %d, want 15 15", p.Start(), p.End())
	}
	if lag := p.Lag(20); lag != 5 {
		t.Fatalf("lag %d, want 5", lag)
	}
}

func TestLockTimeoutRedeliversAndLimitArchives(t *testing.T) {
	p := newTestPartition(0)
	now := t0
	for delivery := int16(1); delivery <= 3; delivery++ {
		got, _ := p.Acquire("m1", -1, batches(0, 0), 10, false, now)
		if want := []AcquiredRange{{0, 0, delivery}}; !reflect.DeepEqual(got, want) {
			t.Fatalf("delivery %d: %v, want %v", delivery, got, want)
		}
		if d := p.NextDeadline(); !d.Equal(now.Add(time.Second)) {
			t.Fatalf("deadline %v", d)
		}
		if n, _ := p.Expire(now.Add(999 * time.Millisecond)); n != 0 {
			t.Fatalf("expired early")
		}
		now = now.Add(time.Second)
		p.Expire(now)
	}
	// The third lock ended at the limit of 3: archived, start moved.
	if st, _ := p.State(0); st != Acknowledged || p.Start() != 1 || p.ArchivedOverLimit() != 1 {
		t.Fatalf("poison record: state %v start %d archived %d", st, p.Start(), p.ArchivedOverLimit())
	}
	if got, _ := p.Acquire("m1", -1, batches(0, 0), 10, false, now); len(got) != 0 {
		t.Fatalf("archived record delivered again: %v", got)
	}
}

func TestReleaseAtLimitArchives(t *testing.T) {
	p := newTestPartition(0)
	p.Acquire("m1", -1, batches(0, 1), 10, false, t0)
	if _, err := p.Acknowledge("m1", []AckBatch{{0, 0, []int8{AckRelease}}, {1, 1, []int8{AckAccept}}}, false, t0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		p.Acquire("m1", -1, batches(0, 1), 10, false, t0)
		if _, err := p.Acknowledge("m1", []AckBatch{{0, 0, []int8{AckRelease}}}, false, t0); err != nil {
			t.Fatal(err)
		}
	}
	if p.Start() != 2 || p.ArchivedOverLimit() != 1 {
		t.Fatalf("start %d archived %d, want 2 1", p.Start(), p.ArchivedOverLimit())
	}
}

func TestBadAcknowledgementsLeaveStateUnchanged(t *testing.T) {
	p := newTestPartition(100)
	p.Acquire("m1", -1, batches(100, 104), 10, false, t0)
	p.Acquire("m2", -1, batches(105, 106), 10, false, t0)
	before := p.Snapshot()
	beforeRecs := append([]inflight(nil), p.records...)
	for _, c := range []struct {
		name   string
		member string
		acks   []AckBatch
		renew  bool
		want   *kerr.Error
	}{
		{"by another member", "m2", []AckBatch{{100, 100, []int8{AckAccept}}}, false, kerr.InvalidRecordState},
		{"below the start", "m1", []AckBatch{{99, 100, []int8{AckAccept}}}, false, kerr.InvalidRecordState},
		{"past the end", "m1", []AckBatch{{104, 110, []int8{AckAccept}}}, false, kerr.InvalidRecordState},
		{"first after last", "m1", []AckBatch{{102, 101, []int8{AckAccept}}}, false, kerr.InvalidRequest},
		{"unknown type", "m1", []AckBatch{{100, 100, []int8{9}}}, false, kerr.InvalidRequest},
		{"renew not allowed", "m1", []AckBatch{{100, 100, []int8{AckRenew}}}, false, kerr.InvalidRequest},
		{"types count", "m1", []AckBatch{{100, 102, []int8{1, 1}}}, false, kerr.InvalidRequest},
		{"overlapping", "m1", []AckBatch{{100, 101, []int8{1}}, {101, 102, []int8{1}}}, false, kerr.InvalidRequest},
		{"no member", "", []AckBatch{{100, 100, []int8{1}}}, false, kerr.InvalidRequest},
		// One good batch and one bad: nothing is applied.
		{"partly bad", "m1", []AckBatch{{100, 100, []int8{1}}, {108, 108, []int8{1}}}, false, kerr.InvalidRecordState},
	} {
		_, err := p.Acknowledge(c.member, c.acks, c.renew, t0)
		if err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if !reflect.DeepEqual(p.Snapshot(), before) || !reflect.DeepEqual(p.records, beforeRecs) {
			t.Fatalf("%s: state changed", c.name)
		}
	}
	// Acknowledged twice: the second is INVALID_RECORD_STATE.
	if _, err := p.Acknowledge("m1", []AckBatch{{100, 100, []int8{AckAccept}}}, false, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acknowledge("m1", []AckBatch{{100, 100, []int8{AckAccept}}}, false, t0); err != kerr.InvalidRecordState {
		t.Fatalf("double ack: %v", err)
	}
	// An ack after the lock expired is refused.
	p.Expire(t0.Add(time.Second))
	if _, err := p.Acknowledge("m1", []AckBatch{{101, 101, []int8{AckAccept}}}, false, t0); err != kerr.InvalidRecordState {
		t.Fatalf("ack after lock expiry: %v", err)
	}
}

func TestRenewExtendsLock(t *testing.T) {
	p := newTestPartition(0)
	p.Acquire("m1", -1, batches(0, 0), 10, false, t0)
	if _, err := p.Acknowledge("m1", []AckBatch{{0, 0, []int8{AckRenew}}}, true, t0.Add(900*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	p.Expire(t0.Add(1500 * time.Millisecond))
	if st, _ := p.State(0); st != Acquired {
		t.Fatalf("renewed record %v", st)
	}
	p.Expire(t0.Add(1900 * time.Millisecond))
	if st, _ := p.State(0); st != Available {
		t.Fatalf("record after renewed lock %v", st)
	}
}

func TestSkipAndHolesArchived(t *testing.T) {
	p := newTestPartition(0)
	// 0-2 data, 3 control, 4-5 missing (compacted), 6-7 data.
	in := []Batch{{0, 2, false}, {3, 3, true}, {6, 7, false}}
	got, used := p.Acquire("m1", -1, in, 100, false, t0)
	if want := []AcquiredRange{{0, 2, 1}, {6, 7, 1}}; !reflect.DeepEqual(got, want) || used != 3 {
		t.Fatalf("%v used %d", got, used)
	}
	if _, err := p.Acknowledge("m1", []AckBatch{{0, 2, []int8{1}}, {6, 7, []int8{AckGap}}}, false, t0); err != nil {
		t.Fatal(err)
	}
	if p.Start() != 8 {
		t.Fatalf("start %d, want 8", p.Start())
	}
}

func TestMaxInFlightAndWholeBatches(t *testing.T) {
	p := NewPartition(PartitionConfig{LockDuration: time.Second, DeliveryLimit: 5, MaxInFlight: 4})
	p.Initialize(0)
	got, _ := p.Acquire("m1", -1, []Batch{{0, 2, false}, {3, 5, false}, {6, 9, false}}, 2, false, t0)
	// Whole first batch (3 records, over max 2), then stop.
	if want := []AcquiredRange{{0, 2, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v", got)
	}
	got, _ = p.Acquire("m2", -1, []Batch{{0, 2, false}, {3, 5, false}, {6, 9, false}}, 100, false, t0)
	// The window is 4 records: only offset 3 fits.
	if want := []AcquiredRange{{3, 3, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v", got)
	}
	if _, ok := p.FetchOffset(); ok {
		t.Fatalf("a full window reports room")
	}
}

func TestReleaseMemberAndSnapshotRestore(t *testing.T) {
	p := newTestPartition(0)
	p.Acquire("m1", -1, batches(0, 3), 10, false, t0)
	p.Acknowledge("m1", []AckBatch{{1, 1, []int8{AckAccept}}, {2, 2, []int8{AckReject}}}, false, t0)
	snap := p.Snapshot()
	want := Snapshot{Start: 0, Batches: []StateBatch{{0, 0, Available, 1}, {1, 1, Acknowledged, 1}, {2, 2, Archived, 1}, {3, 3, Available, 1}}}
	if !reflect.DeepEqual(snap, want) {
		t.Fatalf("snapshot %+v", snap)
	}
	q := newTestPartition(0)
	q.Restore(snap)
	if !reflect.DeepEqual(q.Snapshot(), snap) {
		t.Fatalf("restore %+v", q.Snapshot())
	}
	if n := p.ReleaseMember("m1"); n != 2 {
		t.Fatalf("released %d", n)
	}
	got, _ := q.Acquire("m2", -1, batches(0, 3), 10, false, t0)
	if want := []AcquiredRange{{0, 0, 2}, {3, 3, 2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after restore %v", got)
	}
}

func TestAcquireStrictSplitsBatches(t *testing.T) {
	p := newTestPartition(0)
	in := []Batch{{BaseOffset: 0, LastOffset: 9}}
	got, used := p.Acquire("m1", -1, in, 4, true, t0)
	if want := []AcquiredRange{{0, 3, 1}}; !reflect.DeepEqual(got, want) || used != 1 {
		t.Fatalf("strict: %v used %d", got, used)
	}
	if off, _ := p.FetchOffset(); off != 4 {
		t.Fatalf("fetch offset %d, want 4 (mid-batch)", off)
	}
	got, _ = p.Acquire("m2", -1, in, 100, true, t0)
	if want := []AcquiredRange{{4, 9, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("rest of the batch: %v", got)
	}
}

// A fetch reads the log from the fetch offset; records between it and the
// first batch read are gone from the log (compaction, retention). They
// must be archived: left available, the start offset never passes them
// and every fetch reads from them again.
func TestAcquireArchivesGapAtFetchOffset(t *testing.T) {
	p := newTestPartition(10)
	off, _ := p.FetchOffset()
	got, used := p.Acquire("m1", off, batches(15, 17), 10, false, t0)
	if want := []AcquiredRange{{15, 17, 1}}; !reflect.DeepEqual(got, want) || used != 3 {
		t.Fatalf("acquire: %v used %d, want %v used 3", got, used, want)
	}
	if p.Start() != 15 || p.Lag(18) != 3 {
		t.Fatalf("start %d lag %d, want 15 and 3: the offsets before the first batch are archived", p.Start(), p.Lag(18))
	}
	if _, err := p.Acknowledge("m1", []AckBatch{{15, 17, []int8{AckAccept}}}, false, t0); err != nil {
		t.Fatal(err)
	}
	if p.Start() != 18 || p.Lag(18) != 0 {
		t.Fatalf("start %d lag %d, want 18 and 0", p.Start(), p.Lag(18))
	}
	// A released record in the middle: the read from it returns its
	// batch (starting before it) and later ones; nothing else changes.
	q := newTestPartition(0)
	q.Acquire("m1", 0, []Batch{{0, 4, false}, {5, 9, false}}, 100, false, t0)
	if _, err := q.Acknowledge("m1", []AckBatch{{0, 9, []int8{AckAccept, AckAccept, AckAccept, AckRelease, AckAccept, AckAccept, AckAccept, AckAccept, AckAccept, AckAccept}}}, false, t0); err != nil {
		t.Fatal(err)
	}
	off, _ = q.FetchOffset()
	got, _ = q.Acquire("m2", off, []Batch{{0, 4, false}, {5, 9, false}}, 100, false, t0)
	if want := []AcquiredRange{{3, 3, 2}}; off != 3 || !reflect.DeepEqual(got, want) {
		t.Fatalf("redelivery from %d: %v, want %v", off, got, want)
	}
}

package share

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// RecordState is the state of one in-flight record, with Kafka's values
// (the ShareSnapshot/ShareUpdate records use them).
type RecordState int8

const (
	Available    RecordState = 0 // may be acquired (again)
	Acquired     RecordState = 1 // locked by one member until its deadline
	Acknowledged RecordState = 2 // accepted: never delivered again
	Archived     RecordState = 4 // rejected, over the delivery limit, a gap or control record
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "available"
	case Acquired:
		return "acquired"
	case Acknowledged:
		return "acknowledged"
	case Archived:
		return "archived"
	}
	return "unknown"
}

// Acknowledgement types of ShareFetch and ShareAcknowledge.
const (
	AckGap     int8 = 0 // no record at the offset (compacted away, control record)
	AckAccept  int8 = 1
	AckRelease int8 = 2
	AckReject  int8 = 3
	AckRenew   int8 = 4 // KIP-1222: extend the acquisition lock
)

// PartitionConfig tunes a share-partition.
type PartitionConfig struct {
	// LockDuration is how long an acquired record stays with its member
	// (group.share.record.lock.duration.ms).
	LockDuration time.Duration
	// DeliveryLimit is the number of deliveries after which a record
	// that comes back is archived (group.share.delivery.count.limit).
	DeliveryLimit int
	// MaxInFlight bounds the records between the start and end offsets
	// (group.share.partition.max.record.locks).
	MaxInFlight int
}

func (c PartitionConfig) withDefaults() PartitionConfig {
	if c.LockDuration <= 0 {
		c.LockDuration = 30 * time.Second
	}
	if c.DeliveryLimit <= 0 {
		c.DeliveryLimit = 5
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 2000
	}
	return c
}

// inflight is one record between the start and end offsets.
type inflight struct {
	state      RecordState
	deliveries int16
	member     string    // the member holding it, while Acquired
	deadline   time.Time // its lock's end, while Acquired
}

// Partition is the state of one share-partition (a group reading one
// topic partition): every record below Start is done (acknowledged or
// archived); the records in [Start, End) have a state each; End is the
// first offset never acquired. Callers serialize access; no method
// blocks, reads the clock or does I/O: now comes in as an argument.
type Partition struct {
	cfg         PartitionConfig
	initialized bool
	start       int64
	records     []inflight // records[i] is offset start+i
	// archivedOverLimit counts records archived because they reached
	// the delivery limit.
	archivedOverLimit int64
}

// NewPartition returns a share-partition not yet initialized: its first
// fetch decides the start offset (share.auto.offset.reset), or Restore
// does.
func NewPartition(cfg PartitionConfig) *Partition {
	return &Partition{cfg: cfg.withDefaults()}
}

// SetConfig changes the partition's tuning; records in flight keep their
// deadlines.
func (p *Partition) SetConfig(cfg PartitionConfig) { p.cfg = cfg.withDefaults() }

// Config is the partition's tuning.
func (p *Partition) Config() PartitionConfig { return p.cfg }

// Initialized reports whether the start offset is set.
func (p *Partition) Initialized() bool { return p.initialized }

// Initialize sets the start offset of a partition that has none.
func (p *Partition) Initialize(start int64) {
	if p.initialized {
		return
	}
	p.initialized, p.start, p.records = true, start, nil
}

// Reset moves the start offset to start and forgets every record in
// flight (AlterShareGroupOffsets, or the log's start moving past it).
func (p *Partition) Reset(start int64) {
	p.initialized, p.start, p.records = true, start, nil
}

// Start is the share-partition start offset (SPSO).
func (p *Partition) Start() int64 { return p.start }

// End is the share-partition end offset (SPEO): the first offset never
// acquired.
func (p *Partition) End() int64 { return p.start + int64(len(p.records)) }

// ArchivedOverLimit is how many records were archived for reaching the
// delivery limit.
func (p *Partition) ArchivedOverLimit() int64 { return p.archivedOverLimit }

// State returns the state and delivery count of offset; records below
// the start are reported Acknowledged, those at or past the end
// Available with no delivery.
func (p *Partition) State(offset int64) (RecordState, int16) {
	switch {
	case offset < p.start:
		return Acknowledged, 0
	case offset >= p.End():
		return Available, 0
	}
	r := p.records[offset-p.start]
	return r.state, r.deliveries
}

// Done counts the records in [Start, End) that are acknowledged or
// archived: lag is the log's end minus Start minus Done.
func (p *Partition) Done() int64 {
	var n int64
	for _, r := range p.records {
		if r.state == Acknowledged || r.state == Archived {
			n++
		}
	}
	return n
}

// Lag is the number of records up to highWatermark not yet acknowledged
// or archived.
func (p *Partition) Lag(highWatermark int64) int64 {
	if !p.initialized || highWatermark <= p.start {
		return 0
	}
	return highWatermark - p.start - p.Done()
}

// Expire returns the records whose lock ended at or before now: each
// becomes available again, or archived once it reached the delivery
// limit. It returns how many locks ended and how many of those records
// became available (a fetch may take them).
func (p *Partition) Expire(now time.Time) (ended, released int) {
	for i := range p.records {
		r := &p.records[i]
		if r.state == Acquired && !now.Before(r.deadline) {
			ended++
			if p.releaseLocked(r) {
				released++
			}
		}
	}
	p.advance()
	return ended, released
}

// NextDeadline is the earliest lock end, zero if nothing is acquired.
func (p *Partition) NextDeadline() time.Time {
	var next time.Time
	for _, r := range p.records {
		if r.state == Acquired && (next.IsZero() || r.deadline.Before(next)) {
			next = r.deadline
		}
	}
	return next
}

// releaseLocked makes an acquired record available again, or archives it
// at the delivery limit; it reports whether it became available.
func (p *Partition) releaseLocked(r *inflight) bool {
	r.member, r.deadline = "", time.Time{}
	if int(r.deliveries) >= p.cfg.DeliveryLimit {
		r.state = Archived
		p.archivedOverLimit++
		return false
	}
	r.state = Available
	return true
}

// ReleaseMember makes every record member holds available again (its
// share session closed or it left the group); the delivery counts stay.
func (p *Partition) ReleaseMember(member string) (released int) {
	for i := range p.records {
		r := &p.records[i]
		if r.state == Acquired && r.member == member {
			if p.releaseLocked(r) {
				released++
			}
		}
	}
	p.advance()
	return released
}

// advance moves the start past the leading done records.
func (p *Partition) advance() {
	n := 0
	for n < len(p.records) && (p.records[n].state == Acknowledged || p.records[n].state == Archived) {
		n++
	}
	if n == 0 {
		return
	}
	p.start += int64(n)
	p.records = append(p.records[:0], p.records[n:]...)
}

// FetchOffset is where a fetch reads the log from: the first available
// record in flight, else the end. ok is false when nothing can be
// acquired (every record in flight is taken and the in-flight window is
// full).
func (p *Partition) FetchOffset() (offset int64, ok bool) {
	for i, r := range p.records {
		if r.state == Available {
			return p.start + int64(i), true
		}
	}
	return p.End(), len(p.records) < p.cfg.MaxInFlight
}

// Batch describes one batch of the log a fetch read, by its header.
type Batch struct {
	BaseOffset, LastOffset int64
	// Skip marks a batch no consumer sees: a control batch, or a batch of
	// an aborted transaction under read_committed. Its offsets are
	// archived, never delivered.
	Skip bool
}

// AcquiredRange is a run of acquired offsets with one delivery count, as
// ShareFetch answers them.
type AcquiredRange struct {
	First, Last   int64
	DeliveryCount int16
}

// Acquire gives member the available records of batches (in log order,
// as read from the log from fetchOffset, what FetchOffset returned) until
// maxRecords are taken,
// whole batches at a time (strict: no more than maxRecords, splitting a
// batch; the member's client keeps only the records it acquired of it),
// locking them until now+LockDuration. Offsets
// from fetchOffset to the first batch and between batches (removed by
// compaction or retention) and skipped batches are archived: left
// available, they would hold the start offset back and be read again by
// every fetch. It returns the acquired ranges and how many batches of the
// input hold an acquired record (the fetch returns that prefix).
func (p *Partition) Acquire(member string, fetchOffset int64, batches []Batch, maxRecords int, strict bool, now time.Time) (ranges []AcquiredRange, usedBatches int) {
	if !p.initialized || member == "" {
		return nil, 0
	}
	if maxRecords <= 0 {
		maxRecords = 500
	}
	deadline := now.Add(p.cfg.LockDuration)
	taken := 0
	expected := fetchOffset // the offset after the previous batch
	for i, b := range batches {
		if taken >= maxRecords {
			break
		}
		if b.LastOffset < b.BaseOffset || b.LastOffset < p.start {
			expected = max(expected, b.LastOffset+1)
			continue
		}
		first := max(b.BaseOffset, p.start)
		// A hole before this batch (compaction) within the window.
		if expected >= 0 && expected < first {
			if !p.grow(first - 1) {
				break
			}
			for o := max(expected, p.start); o < first; o++ {
				p.archiveIfAvailable(o)
			}
		}
		expected = b.LastOffset + 1
		if !p.grow(b.LastOffset) {
			// The in-flight window is full: take what fits of this
			// batch (the records already in it) only.
			if first >= p.End() {
				break
			}
		}
		got := 0
		for o := first; o <= b.LastOffset && o < p.End(); o++ {
			r := &p.records[o-p.start]
			if r.state != Available {
				continue
			}
			if b.Skip {
				r.state = Archived
				continue
			}
			if strict && taken+got >= maxRecords {
				break
			}
			r.state, r.member, r.deadline = Acquired, member, deadline
			r.deliveries++
			got++
			n := len(ranges)
			if n > 0 && ranges[n-1].Last == o-1 && ranges[n-1].DeliveryCount == r.deliveries {
				ranges[n-1].Last = o
			} else {
				ranges = append(ranges, AcquiredRange{First: o, Last: o, DeliveryCount: r.deliveries})
			}
		}
		if got > 0 {
			taken += got
			usedBatches = i + 1
		}
	}
	p.advance()
	return ranges, usedBatches
}

// grow extends the in-flight records with available ones through offset,
// within MaxInFlight; false if offset does not fit.
func (p *Partition) grow(offset int64) bool {
	need := offset - p.start + 1
	if need <= int64(len(p.records)) {
		return true
	}
	if need > int64(p.cfg.MaxInFlight) {
		// Grow as far as allowed.
		for int64(len(p.records)) < int64(p.cfg.MaxInFlight) {
			p.records = append(p.records, inflight{})
		}
		return false
	}
	for int64(len(p.records)) < need {
		p.records = append(p.records, inflight{})
	}
	return true
}

func (p *Partition) archiveIfAvailable(offset int64) {
	if offset < p.start || offset >= p.End() {
		return
	}
	if r := &p.records[offset-p.start]; r.state == Available {
		r.state = Archived
	}
}

// AckBatch is one acknowledgement range: Types holds one type for the
// whole range or one per offset.
type AckBatch struct {
	First, Last int64
	Types       []int8
}

// Acknowledge applies member's acknowledgements, all or nothing: every
// offset must be acquired by member (else INVALID_RECORD_STATE), the
// ranges well formed, ascending and not overlapping, the types known
// (else INVALID_REQUEST); on an error the state is unchanged. Accepted
// records are acknowledged, rejected ones and gaps archived, released
// ones become available again (archived at the delivery limit), renewed
// ones keep their lock until now+LockDuration (only when allowRenew).
// released reports how many became available.
func (p *Partition) Acknowledge(member string, acks []AckBatch, allowRenew bool, now time.Time) (released int, err *kerr.Error) {
	if err := p.checkAcks(member, acks, allowRenew); err != nil {
		return 0, err
	}
	for _, a := range acks {
		for o := a.First; o <= a.Last; o++ {
			t := a.Types[0]
			if len(a.Types) > 1 {
				t = a.Types[o-a.First]
			}
			r := &p.records[o-p.start]
			switch t {
			case AckAccept:
				r.state, r.member, r.deadline = Acknowledged, "", time.Time{}
			case AckReject, AckGap:
				r.state, r.member, r.deadline = Archived, "", time.Time{}
			case AckRelease:
				if p.releaseLocked(r) {
					released++
				}
			case AckRenew:
				r.deadline = now.Add(p.cfg.LockDuration)
			}
		}
	}
	p.advance()
	return released, nil
}

func (p *Partition) checkAcks(member string, acks []AckBatch, allowRenew bool) *kerr.Error {
	if member == "" {
		return kerr.InvalidRequest
	}
	prevLast := int64(-1)
	for _, a := range acks {
		if a.First < 0 || a.Last < a.First || a.First <= prevLast {
			return kerr.InvalidRequest
		}
		prevLast = a.Last
		if n := a.Last - a.First + 1; len(a.Types) != 1 && int64(len(a.Types)) != n {
			return kerr.InvalidRequest
		}
		for _, t := range a.Types {
			if t < AckGap || t > AckRenew || (t == AckRenew && !allowRenew) {
				return kerr.InvalidRequest
			}
		}
	}
	if !p.initialized {
		return kerr.InvalidRecordState
	}
	for _, a := range acks {
		if a.First < p.start || a.Last >= p.End() {
			return kerr.InvalidRecordState
		}
		for o := a.First; o <= a.Last; o++ {
			r := p.records[o-p.start]
			if r.state != Acquired || r.member != member {
				return kerr.InvalidRecordState
			}
		}
	}
	return nil
}

// StateBatch is a run of offsets with one state and delivery count, as
// a snapshot lists them.
type StateBatch struct {
	First, Last   int64
	State         RecordState
	DeliveryCount int16
}

// Snapshot is what a share-partition persists: its start offset and the
// state of the records in flight. Acquired records are written as
// available (a lock does not outlive its holder's coordinator).
type Snapshot struct {
	Start   int64
	Batches []StateBatch
}

// Snapshot returns the partition's durable state.
func (p *Partition) Snapshot() Snapshot {
	s := Snapshot{Start: p.start}
	for i, r := range p.records {
		st := r.state
		if st == Acquired {
			st = Available
		}
		o := p.start + int64(i)
		if n := len(s.Batches); n > 0 && s.Batches[n-1].Last == o-1 && s.Batches[n-1].State == st && s.Batches[n-1].DeliveryCount == r.deliveries {
			s.Batches[n-1].Last = o
			continue
		}
		s.Batches = append(s.Batches, StateBatch{First: o, Last: o, State: st, DeliveryCount: r.deliveries})
	}
	return s
}

// Restore replaces the partition's state with a snapshot.
func (p *Partition) Restore(s Snapshot) {
	p.Reset(s.Start)
	for _, b := range s.Batches {
		if b.Last < b.First || b.First < s.Start || b.Last-s.Start >= int64(p.cfg.MaxInFlight)*4 {
			continue // a malformed or oversized run: its records become available
		}
		p.grow(b.Last)
		for o := b.First; o <= b.Last && o < p.End(); o++ {
			st := b.State
			if st == Acquired {
				st = Available
			}
			p.records[o-p.start] = inflight{state: st, deliveries: b.DeliveryCount}
		}
	}
	p.advance()
}

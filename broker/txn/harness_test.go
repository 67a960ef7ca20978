package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// scenario drives one Coordinator with an injected clock and producer id
// allocator, collecting every record and marker it asks for.
type scenario struct {
	t       *testing.T
	cfg     Config
	c       *Coordinator
	now     time.Time
	nextPID int64
	records []Record
	markers []Markers
}

const (
	testTimeoutMs  = 60_000
	testCoordEpoch = 3
)

func newScenario(t *testing.T) *scenario {
	t.Helper()
	s := &scenario{t: t, cfg: DefaultConfig(), now: time.UnixMilli(1_700_000_000_000), nextPID: 1000}
	if err := s.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s.c = New(&s.cfg, testCoordEpoch)
	return s
}

func (s *scenario) alloc() (int64, error) {
	s.nextPID++
	return s.nextPID, nil
}

func (s *scenario) collect(e Effects) {
	s.records = append(s.records, e.Records...)
	s.markers = append(s.markers, e.Markers...)
}

func (s *scenario) advance(d time.Duration) {
	s.now = s.now.Add(d)
	s.collect(s.c.Tick(s.now))
}

// takeMarkers returns the markers requested since the last take.
func (s *scenario) takeMarkers() []Markers {
	m := s.markers
	s.markers = nil
	return m
}

func (s *scenario) init(id string, pid int64, epoch int16) InitResult {
	s.t.Helper()
	res, eff := s.c.InitProducerID(s.now, InitRequest{TransactionalID: id, TimeoutMs: testTimeoutMs, ProducerID: pid, ProducerEpoch: epoch, Version: 4}, s.alloc)
	s.collect(eff)
	return res
}

// mustInit initialises id without KIP-360 fields and returns its id and epoch.
func (s *scenario) mustInit(id string) (int64, int16) {
	s.t.Helper()
	res := s.init(id, -1, -1)
	if res.Err != nil {
		s.t.Fatalf("init %s: %v", id, res.Err)
	}
	return res.ProducerID, res.ProducerEpoch
}

func (s *scenario) add(id string, pid int64, epoch int16, tps ...TopicPartition) *kerr.Error {
	s.t.Helper()
	res, eff := s.c.AddPartitions(s.now, AddPartitionsRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Partitions: tps, Version: 3})
	s.collect(eff)
	if len(res) != len(tps) {
		s.t.Fatalf("%d results for %d partitions", len(res), len(tps))
	}
	var err *kerr.Error
	for i, r := range res {
		if i > 0 && r.Err != err {
			s.t.Fatalf("partitions answered differently: %v", res)
		}
		err = r.Err
	}
	return err
}

func (s *scenario) end(id string, pid int64, epoch int16, commit bool) *kerr.Error {
	s.t.Helper()
	err, eff := s.c.EndTxn(s.now, EndTxnRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Commit: commit, Version: 3})
	s.collect(eff)
	return err
}

// completeAll reports every requested marker durable.
func (s *scenario) completeAll() {
	s.t.Helper()
	for _, m := range s.takeMarkers() {
		err, eff := s.c.CompleteTxn(s.now, m)
		if err != nil {
			s.t.Fatalf("complete %s: %v", m.TransactionalID, err)
		}
		s.collect(eff)
	}
}

func (s *scenario) state(id string) Snapshot {
	s.t.Helper()
	snap, ok := s.c.State(id)
	if !ok {
		s.t.Fatalf("no state for %s", id)
	}
	return snap
}

func (s *scenario) expectState(id string, want State) Snapshot {
	s.t.Helper()
	snap := s.state(id)
	if snap.State != want {
		s.t.Fatalf("%s: state %v, want %v", id, snap.State, want)
	}
	return snap
}

// lastRecord is the last record written for id.
func (s *scenario) lastRecord(id string) Record {
	s.t.Helper()
	for i := len(s.records) - 1; i >= 0; i-- {
		if s.records[i].TransactionalID == id {
			return s.records[i]
		}
	}
	s.t.Fatalf("no record for %s", id)
	return Record{}
}

func expectErr(t *testing.T, what string, got, want *kerr.Error) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: error %v, want %v", what, got, want)
	}
}

var (
	tpA0 = TopicPartition{"a", 0}
	tpA1 = TopicPartition{"a", 1}
	tpB0 = TopicPartition{"b", 0}
)

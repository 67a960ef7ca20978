package txn

import (
	"errors"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// metadata is one transactional id's state: Kafka's TransactionMetadata.
type metadata struct {
	id                string
	producerID        int64
	lastProducerID    int64
	producerEpoch     int16
	lastProducerEpoch int16
	timeoutMs         int32
	state             State
	partitions        map[TopicPartition]bool
	startTimestamp    int64 // ms; -1 outside a transaction
	lastUpdate        int64 // ms
	// pending is the state a transaction moves to once the caller reports
	// its markers durable (CompleteCommit after PrepareCommit,
	// CompleteAbort after PrepareAbort); NoState otherwise. Kafka's
	// pendingState also covers the window while a record is being
	// written; here state changes with the record that is returned, so
	// that window does not exist (see the package documentation).
	pending State
}

func (m *metadata) sortedPartitions() []TopicPartition {
	out := make([]TopicPartition, 0, len(m.partitions))
	for tp := range m.partitions {
		out = append(out, tp)
	}
	sortPartitions(out)
	return out
}

func sortPartitions(tps []TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// Coordinator is the transaction coordinator for the transactional ids of
// one __transaction_state partition. It is not safe for concurrent use.
// See the package documentation for the caller's duties.
type Coordinator struct {
	cfg              *Config
	coordinatorEpoch int32
	txns             map[string]*metadata
	out              Effects
}

// New returns a coordinator without transactions. coordinatorEpoch is the
// leader epoch of the __transaction_state partition; it goes into every
// marker so partition leaders can refuse markers of a deposed coordinator.
// cfg must outlive it.
func New(cfg *Config, coordinatorEpoch int32) *Coordinator {
	return &Coordinator{cfg: cfg, coordinatorEpoch: coordinatorEpoch, txns: map[string]*metadata{}}
}

// CoordinatorEpoch is the epoch given to New.
func (c *Coordinator) CoordinatorEpoch() int32 { return c.coordinatorEpoch }

// Len is the number of transactional ids held.
func (c *Coordinator) Len() int { return len(c.txns) }

func (c *Coordinator) take() Effects {
	out := c.out
	c.out = Effects{}
	return out
}

// persist records m's current state, as Kafka's TxnTransitMetadata
// written to the log.
func (c *Coordinator) persist(m *metadata) {
	c.out.Records = append(c.out.Records, Record{TransactionalID: m.id, Value: m.value(c.cfg.LogValueVersion)})
}

func (c *Coordinator) sendMarkers(m *metadata) {
	c.out.Markers = append(c.out.Markers, Markers{
		TransactionalID:  m.id,
		ProducerID:       m.producerID,
		ProducerEpoch:    m.producerEpoch,
		Commit:           m.state == PrepareCommit,
		CoordinatorEpoch: c.coordinatorEpoch,
		Partitions:       m.sortedPartitions(),
	})
}

// fenced is the error for a stale epoch: PRODUCER_FENCED (KIP-588), or
// INVALID_PRODUCER_EPOCH for requests older than legacyBelow.
func fenced(version, legacyBelow int16) *kerr.Error {
	if version < legacyBelow {
		return kerr.InvalidProducerEpoch
	}
	return kerr.ProducerFenced
}

// The first request version of each API that knows PRODUCER_FENCED.
const (
	initFencedVersion       = 4
	addPartitionsFencedVer  = 2
	addOffsetsFencedVersion = 2
	endTxnFencedVersion     = 2
)

// InitRequest is InitProducerId with a transactional id.
type InitRequest struct {
	TransactionalID string
	TimeoutMs       int32
	// ProducerID and ProducerEpoch (v3+, KIP-360) are the producer's
	// current id and epoch when it reinitialises after an error; both -1
	// otherwise.
	ProducerID    int64
	ProducerEpoch int16
	Version       int16
}

// InitProducerID handles InitProducerId for a transactional id. allocPID
// returns a fresh producer id; an error it returns that is a *kerr.Error is
// answered as such, any other as COORDINATOR_NOT_AVAILABLE.
//
// On an Ongoing transaction the epoch is bumped, the transaction aborted
// (its PrepareAbort record and markers are in the Effects) and the answer
// is CONCURRENT_TRANSACTIONS: the producer retries once the abort is done,
// and that retry bumps the epoch again.
func (c *Coordinator) InitProducerID(now time.Time, req InitRequest, allocPID func() (int64, error)) (InitResult, Effects) {
	res, err := c.initProducerID(now, req, allocPID)
	if err != nil {
		if err == kerr.ProducerFenced {
			err = fenced(req.Version, initFencedVersion)
		}
		return InitResult{Err: err, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch}, c.take()
	}
	return res, c.take()
}

func allocError(err error) *kerr.Error {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return kerr.CoordinatorNotAvailable
}

func (c *Coordinator) initProducerID(now time.Time, req InitRequest, allocPID func() (int64, error)) (InitResult, *kerr.Error) {
	if req.TransactionalID == "" {
		return InitResult{}, kerr.InvalidRequest
	}
	if req.TimeoutMs <= 0 || time.Duration(req.TimeoutMs)*time.Millisecond > c.cfg.MaxTimeout {
		return InitResult{}, kerr.InvalidTransactionTimeout
	}
	expected := req.ProducerID != NoProducerID || req.ProducerEpoch != NoProducerEpoch
	if expected && (req.ProducerID < 0 || req.ProducerEpoch < 0) {
		return InitResult{}, kerr.InvalidRequest
	}
	nowMs := now.UnixMilli()
	m := c.txns[req.TransactionalID]
	if m == nil {
		pid, err := allocPID()
		if err != nil {
			return InitResult{}, allocError(err)
		}
		m = &metadata{
			id: req.TransactionalID, producerID: pid, lastProducerID: NoProducerID,
			producerEpoch: NoProducerEpoch, lastProducerEpoch: NoProducerEpoch,
			timeoutMs: req.TimeoutMs, state: Empty, partitions: map[TopicPartition]bool{},
			startTimestamp: -1, lastUpdate: nowMs, pending: NoState,
		}
		c.txns[m.id] = m
	}
	// KIP-360: a producer that names its id and epoch is fenced unless the
	// id was just created, matches, or is the previous id and its epoch
	// was exhausted (a retry of a rotation whose answer was lost).
	if expected && m.producerEpoch != NoProducerEpoch && req.ProducerID != m.producerID &&
		(req.ProducerID != m.lastProducerID || !epochExhausted(req.ProducerEpoch)) {
		return InitResult{}, kerr.ProducerFenced
	}
	switch m.state {
	case PrepareCommit, PrepareAbort:
		return InitResult{}, kerr.ConcurrentTransactions
	case Ongoing:
		// Fence the producer and abort. The bumped epoch is never
		// returned; the retry bumps again (or rotates the id).
		c.fenceAndAbort(m, nowMs)
		return InitResult{}, kerr.ConcurrentTransactions
	case Empty, CompleteCommit, CompleteAbort:
	default:
		return InitResult{}, kerr.UnknownServerError // Dead, PrepareEpochFence: never held
	}
	switch {
	case epochExhausted(m.producerEpoch) && (!expected || req.ProducerEpoch == m.producerEpoch):
		pid, err := allocPID()
		if err != nil {
			return InitResult{}, allocError(err)
		}
		m.lastProducerEpoch = NoProducerEpoch
		if expected {
			m.lastProducerEpoch = m.producerEpoch
		}
		m.lastProducerID = m.producerID
		m.producerID, m.producerEpoch = pid, 0
	case !expected:
		m.lastProducerID = m.producerID
		m.producerEpoch, m.lastProducerEpoch = m.producerEpoch+1, NoProducerEpoch
	case m.producerEpoch == NoProducerEpoch || req.ProducerEpoch == m.producerEpoch:
		m.lastProducerID = m.producerID
		m.producerEpoch, m.lastProducerEpoch = m.producerEpoch+1, m.producerEpoch
	case req.ProducerEpoch == m.lastProducerEpoch:
		// A retry of a bump whose answer was lost: the same epoch again
		// (no new producer can have come in between: it would have reset
		// the last epoch to -1).
	default:
		return InitResult{}, kerr.ProducerFenced
	}
	m.timeoutMs = req.TimeoutMs
	m.state = Empty
	clear(m.partitions)
	m.startTimestamp = -1
	m.lastUpdate = nowMs
	c.persist(m)
	return InitResult{ProducerID: m.producerID, ProducerEpoch: m.producerEpoch}, nil
}

// fenceAndAbort bumps the epoch of an Ongoing transaction (Kafka's
// PrepareEpochFence, which is never written) and moves it to PrepareAbort
// under the new epoch, asking for abort markers.
func (c *Coordinator) fenceAndAbort(m *metadata, nowMs int64) {
	if m.producerEpoch < math.MaxInt16 {
		m.producerEpoch++
	}
	m.lastProducerEpoch = NoProducerEpoch
	c.prepareEnd(m, false, nowMs)
}

// prepareEnd moves an Ongoing transaction to PrepareCommit or PrepareAbort
// and asks for its markers.
func (c *Coordinator) prepareEnd(m *metadata, commit bool, nowMs int64) {
	m.state, m.pending = PrepareAbort, CompleteAbort
	if commit {
		m.state, m.pending = PrepareCommit, CompleteCommit
	}
	m.lastUpdate = nowMs
	c.persist(m)
	c.sendMarkers(m)
}

// lookup finds an id's transaction for a request by a producer, checking
// its id and (exact) epoch.
func (c *Coordinator) lookup(id string, pid int64, epoch int16) (*metadata, *kerr.Error) {
	if id == "" {
		return nil, kerr.InvalidRequest
	}
	m := c.txns[id]
	switch {
	case m == nil || m.state == Dead:
		return nil, kerr.InvalidProducerIDMapping
	case m.producerID != pid:
		return nil, kerr.InvalidProducerIDMapping
	case m.producerEpoch != epoch:
		return nil, kerr.ProducerFenced
	}
	return m, nil
}

// State returns a snapshot of one transactional id's state.
func (c *Coordinator) State(id string) (Snapshot, bool) {
	m := c.txns[id]
	if m == nil {
		return Snapshot{}, false
	}
	return m.snapshot(), true
}

// Snapshot is a copy of one transactional id's state (Kafka's
// TransactionMetadata).
type Snapshot struct {
	TransactionalID   string
	ProducerID        int64
	LastProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	TimeoutMs         int32
	State             State
	Partitions        []TopicPartition // sorted
	StartTimestamp    int64            // ms; -1 outside a transaction
	LastUpdate        int64            // ms
	PendingState      State            // NoState if none
}

func (m *metadata) snapshot() Snapshot {
	return Snapshot{
		TransactionalID: m.id, ProducerID: m.producerID, LastProducerID: m.lastProducerID,
		ProducerEpoch: m.producerEpoch, LastProducerEpoch: m.lastProducerEpoch, TimeoutMs: m.timeoutMs,
		State: m.state, Partitions: m.sortedPartitions(), StartTimestamp: m.startTimestamp,
		LastUpdate: m.lastUpdate, PendingState: m.pending,
	}
}

// IDs returns the transactional ids held, sorted.
func (c *Coordinator) IDs() []string {
	ids := make([]string, 0, len(c.txns))
	for id := range c.txns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

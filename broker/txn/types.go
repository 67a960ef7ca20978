package txn

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// State is a transaction's state; its value is Kafka's code in the
// __transaction_state record (transaction_status).
type State int8

const (
	Empty             State = 0
	Ongoing           State = 1
	PrepareCommit     State = 2
	PrepareAbort      State = 3
	CompleteCommit    State = 4
	CompleteAbort     State = 5
	Dead              State = 6
	PrepareEpochFence State = 7
)

// NoState marks the absence of a pending state.
const NoState State = -1

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// String is the state's name as Kafka prints it (DescribeTransactions,
// ListTransactions).
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	if s == NoState {
		return "None"
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// ParseState returns the state of the given Kafka name.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return NoState, false
}

// valid reports a state code Kafka defines.
func (s State) valid() bool { return s >= Empty && s <= PrepareEpochFence }

// expirationAllowed: states whose transactional id may expire
// (transactional.id.expiration.ms), as Kafka's isExpirationAllowed.
func (s State) expirationAllowed() bool {
	return s == Empty || s == CompleteCommit || s == CompleteAbort
}

// Producer id and epoch sentinels (Kafka's RecordBatch.NO_PRODUCER_ID and
// NO_PRODUCER_EPOCH).
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
)

// epochExhausted is Kafka's isEpochExhausted: a client never gets the
// maximum epoch, so the coordinator can always fence it with one more bump.
func epochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// Config holds the broker settings the coordinator follows.
type Config struct {
	// MaxTimeout is transaction.max.timeout.ms; InitProducerId with a
	// larger timeout (or one ≤ 0) gets INVALID_TRANSACTION_TIMEOUT.
	MaxTimeout time.Duration
	// IDExpiration is transactional.id.expiration.ms: an id whose state
	// is Empty, CompleteCommit or CompleteAbort and that has not been
	// updated for this long is removed (a tombstone is written).
	IDExpiration time.Duration
	// LogValueVersion is the __transaction_state value version written:
	// 0 (Kafka before transaction.version 1, readable by every Kafka) or 1
	// (flexible, KIP-915). Both are read.
	LogValueVersion int16
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		MaxTimeout:      15 * time.Minute,
		IDExpiration:    7 * 24 * time.Hour,
		LogValueVersion: 0,
	}
}

// Validate reports a configuration the coordinator cannot run with.
func (c *Config) Validate() error {
	switch {
	case c.MaxTimeout <= 0:
		return errors.New("txn: transaction.max.timeout.ms must be positive")
	case c.IDExpiration <= 0:
		return errors.New("txn: transactional.id.expiration.ms must be positive")
	case c.LogValueVersion != 0 && c.LogValueVersion != 1:
		return fmt.Errorf("txn: __transaction_state value version %d is not 0 or 1", c.LogValueVersion)
	}
	return nil
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// ConsumerOffsetsTopic is the topic AddOffsetsToTxn adds a partition of.
const ConsumerOffsetsTopic = "__consumer_offsets"

// Effects is what the caller must do after a call, in this order: persist
// Records to the __transaction_state partition, then send the call's
// reply, then write Markers.
type Effects struct {
	Records []Record
	Markers []Markers
}

// Merge appends other's effects after e's.
func (e *Effects) Merge(other Effects) {
	e.Records = append(e.Records, other.Records...)
	e.Markers = append(e.Markers, other.Markers...)
}

// Markers asks the caller to write a transaction marker (a control batch,
// as WriteTxnMarkers does) for one transaction to each of its partitions,
// and to call Coordinator.CompleteTxn once all are durable.
type Markers struct {
	TransactionalID  string
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool // commit marker; abort otherwise
	CoordinatorEpoch int32
	Partitions       []TopicPartition // sorted
}

// PartitionResult is the outcome for one partition of AddPartitionsToTxn.
type PartitionResult struct {
	TopicPartition
	Err *kerr.Error // nil for success
}

// InitResult answers InitProducerId.
type InitResult struct {
	Err           *kerr.Error
	ProducerID    int64
	ProducerEpoch int16
}

// Described is one transaction as DescribeTransactions reports it.
type Described struct {
	Err             *kerr.Error
	TransactionalID string
	State           string
	ProducerID      int64
	ProducerEpoch   int16
	TimeoutMs       int32
	StartTimestamp  int64 // ms; -1 outside a transaction
	Partitions      []TopicPartition
}

// Listed is one transaction as ListTransactions reports it.
type Listed struct {
	TransactionalID string
	ProducerID      int64
	State           string
}

// ListFilter selects transactions for ListTransactions; empty fields match
// everything.
type ListFilter struct {
	States      []string
	ProducerIDs []int64
	// MinDurationMs (ListTransactions v1's DurationFilter, KIP-994) keeps
	// only transactions whose start is more than this many ms before now;
	// 0 or negative (Kafka's default is -1) disables it. As in Kafka, ids
	// outside a transaction (start -1) always pass.
	MinDurationMs int64
}

// ListResult answers ListTransactions.
type ListResult struct {
	Transactions        []Listed // sorted by transactional id
	UnknownStateFilters []string
}

package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AddPartitionsRequest is one transaction of AddPartitionsToTxn (v0–v3
// carry one; v4+ batch several, each handled by its own call, and mark
// broker-sent verifications VerifyOnly, KIP-890).
type AddPartitionsRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []TopicPartition
	// Version is the request's version: below 2 a stale epoch is
	// answered INVALID_PRODUCER_EPOCH instead of PRODUCER_FENCED.
	Version int16
}

// AddPartitions adds partitions to the producer's transaction, starting
// one (Ongoing, with its start time) when none is running. Every partition
// gets the same result. Partitions already in an Ongoing transaction are
// answered at once without a record.
func (c *Coordinator) AddPartitions(now time.Time, req AddPartitionsRequest) ([]PartitionResult, Effects) {
	err := c.addPartitions(now, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Partitions)
	if err == kerr.ProducerFenced {
		err = fenced(req.Version, addPartitionsFencedVer)
	}
	return resultsFor(req.Partitions, err), c.take()
}

func resultsFor(tps []TopicPartition, err *kerr.Error) []PartitionResult {
	out := make([]PartitionResult, len(tps))
	for i, tp := range tps {
		out[i] = PartitionResult{TopicPartition: tp, Err: err}
	}
	return out
}

func (c *Coordinator) addPartitions(now time.Time, id string, pid int64, epoch int16, tps []TopicPartition) *kerr.Error {
	m, err := c.lookup(id, pid, epoch)
	if err != nil {
		return err
	}
	switch m.state {
	case PrepareCommit, PrepareAbort:
		return kerr.ConcurrentTransactions
	case Ongoing:
		if m.containsAll(tps) {
			return nil
		}
	case Empty, CompleteCommit, CompleteAbort:
		m.startTimestamp = now.UnixMilli()
	default:
		return kerr.UnknownServerError // Dead, PrepareEpochFence: never held
	}
	for _, tp := range tps {
		m.partitions[tp] = true
	}
	m.state, m.pending = Ongoing, NoState
	m.lastUpdate = now.UnixMilli()
	c.persist(m)
	return nil
}

func (m *metadata) containsAll(tps []TopicPartition) bool {
	for _, tp := range tps {
		if !m.partitions[tp] {
			return false
		}
	}
	return true
}

// VerifyPartitions answers a verify-only AddPartitionsToTxn (v4+, sent by
// partition leaders before they accept a transactional produce, KIP-890):
// each partition already in the producer's transaction is fine, any other
// gets TRANSACTION_ABORTABLE. A wrong producer id, stale epoch or
// transaction being completed fails every partition alike. It changes
// nothing.
func (c *Coordinator) VerifyPartitions(req AddPartitionsRequest) []PartitionResult {
	m, err := c.lookup(req.TransactionalID, req.ProducerID, req.ProducerEpoch)
	if err == nil && (m.state == PrepareCommit || m.state == PrepareAbort) {
		err = kerr.ConcurrentTransactions
	}
	if err != nil {
		return resultsFor(req.Partitions, err)
	}
	out := resultsFor(req.Partitions, nil)
	for i := range out {
		if m.state != Ongoing || !m.partitions[out[i].TopicPartition] {
			out[i].Err = kerr.TransactionAbortable
		}
	}
	return out
}

// AddOffsetsRequest is AddOffsetsToTxn: the group's offsets partition joins
// the transaction so TxnOffsetCommit can write to it.
type AddOffsetsRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	GroupID         string
	// OffsetsPartition is the __consumer_offsets partition of GroupID.
	OffsetsPartition int32
	// Version: below 2 a stale epoch is INVALID_PRODUCER_EPOCH.
	Version int16
}

// AddOffsets adds the group's __consumer_offsets partition to the
// transaction, exactly as AddPartitions does.
func (c *Coordinator) AddOffsets(now time.Time, req AddOffsetsRequest) (*kerr.Error, Effects) {
	tp := TopicPartition{Topic: ConsumerOffsetsTopic, Partition: req.OffsetsPartition}
	err := c.addPartitions(now, req.TransactionalID, req.ProducerID, req.ProducerEpoch, []TopicPartition{tp})
	if err == kerr.ProducerFenced {
		err = fenced(req.Version, addOffsetsFencedVersion)
	}
	return err, c.take()
}

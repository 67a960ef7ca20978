package txn

import (
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrCorruptRecord reports a __transaction_state record that cannot be
// decoded.
var ErrCorruptRecord = errors.New("txn: corrupt __transaction_state record")

// ErrUnknownKey reports a key version other than Kafka's 0. Kafka skips
// such records with a warning when it loads a partition; so should callers.
var ErrUnknownKey = errors.New("txn: unknown __transaction_state key version")

// Record is one __transaction_state record; a nil Value is a tombstone.
type Record struct {
	TransactionalID string
	Value           *Value
}

// Value is Kafka's TransactionLogValue (versions 0 and 1).
type Value struct {
	Version       int16
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	State         State
	// Topics is null (nil) for Empty, as Kafka writes it.
	Topics              []TopicPartitions
	LastUpdateTimestamp int64 // ms
	StartTimestamp      int64 // ms; -1 outside a transaction

	// Tagged fields of version 1 (KIP-890, KIP-939), for transaction
	// version 2, which this coordinator does not implement: it writes the
	// defaults (-1, -1, 0, -1) and keeps what it reads only in Value.
	PreviousProducerID       int64
	NextProducerID           int64
	ClientTransactionVersion int16
	NextProducerEpoch        int16
}

// TopicPartitions is one topic's partitions in a Value.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// txnKeyVersion is the only key version of __transaction_state.
const txnKeyVersion = 0

// EncodeRecord returns Kafka's key and value bytes for r (value nil for a
// tombstone).
func EncodeRecord(r Record) (key, value []byte) {
	k := kmsg.NewTxnMetadataKey()
	k.Version = txnKeyVersion
	k.TransactionalID = r.TransactionalID
	key = k.AppendTo(nil)
	if r.Value == nil {
		return key, nil
	}
	v := kmsg.NewTxnMetadataValue()
	v.Version = r.Value.Version
	v.ProducerID = r.Value.ProducerID
	v.ProducerEpoch = r.Value.ProducerEpoch
	v.TimeoutMillis = r.Value.TimeoutMs
	v.State = kmsg.TransactionState(r.Value.State)
	if r.Value.Topics != nil {
		v.Topics = make([]kmsg.TxnMetadataValueTopic, len(r.Value.Topics))
		for i, t := range r.Value.Topics {
			v.Topics[i] = kmsg.TxnMetadataValueTopic{Topic: t.Topic, Partitions: t.Partitions}
		}
	}
	v.LastUpdateTimestamp = r.Value.LastUpdateTimestamp
	v.StartTimestamp = r.Value.StartTimestamp
	if v.Version >= 1 {
		v.PreviousProducerID = r.Value.PreviousProducerID
		v.NextProducerID = r.Value.NextProducerID
		v.ClientTransactionVersion = r.Value.ClientTransactionVersion
		v.NextProducerEpoch = r.Value.NextProducerEpoch
	}
	return key, v.AppendTo(nil)
}

// DecodeRecord parses a __transaction_state record. A nil value is a
// tombstone. It fails with ErrUnknownKey for a key version it does not
// know and ErrCorruptRecord (wrapped) for bytes it cannot read, a value
// version above 1 or an unknown state.
func DecodeRecord(key, value []byte) (Record, error) {
	if len(key) < 2 {
		return Record{}, fmt.Errorf("%w: key of %d bytes", ErrCorruptRecord, len(key))
	}
	k := kmsg.NewTxnMetadataKey()
	if err := k.ReadFrom(key); err != nil {
		if k.Version != txnKeyVersion {
			return Record{}, fmt.Errorf("%w %d", ErrUnknownKey, k.Version)
		}
		return Record{}, fmt.Errorf("%w: key: %v", ErrCorruptRecord, err)
	}
	if k.Version != txnKeyVersion {
		return Record{}, fmt.Errorf("%w %d", ErrUnknownKey, k.Version)
	}
	r := Record{TransactionalID: k.TransactionalID}
	if value == nil {
		return r, nil
	}
	if len(value) < 2 {
		return Record{}, fmt.Errorf("%w: value of %d bytes", ErrCorruptRecord, len(value))
	}
	if ver := int16(value[0])<<8 | int16(value[1]); ver < 0 || ver > 1 {
		return Record{}, fmt.Errorf("%w: value version %d", ErrCorruptRecord, ver)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(value); err != nil {
		return Record{}, fmt.Errorf("%w: value: %v", ErrCorruptRecord, err)
	}
	if !State(v.State).valid() {
		return Record{}, fmt.Errorf("%w: state %d", ErrCorruptRecord, v.State)
	}
	val := &Value{
		Version: v.Version, ProducerID: v.ProducerID, ProducerEpoch: v.ProducerEpoch,
		TimeoutMs: v.TimeoutMillis, State: State(v.State),
		LastUpdateTimestamp: v.LastUpdateTimestamp, StartTimestamp: v.StartTimestamp,
		PreviousProducerID: v.PreviousProducerID, NextProducerID: v.NextProducerID,
		ClientTransactionVersion: v.ClientTransactionVersion, NextProducerEpoch: v.NextProducerEpoch,
	}
	if v.Topics != nil {
		val.Topics = make([]TopicPartitions, len(v.Topics))
		for i, t := range v.Topics {
			val.Topics[i] = TopicPartitions{Topic: t.Topic, Partitions: t.Partitions}
		}
	}
	r.Value = val
	return r, nil
}

// value is m's state as Kafka writes it: partitions grouped by topic
// (sorted), null for Empty.
func (m *metadata) value(version int16) *Value {
	v := &Value{
		Version: version, ProducerID: m.producerID, ProducerEpoch: m.producerEpoch,
		TimeoutMs: m.timeoutMs, State: m.state,
		LastUpdateTimestamp: m.lastUpdate, StartTimestamp: m.startTimestamp,
		PreviousProducerID: NoProducerID, NextProducerID: NoProducerID, NextProducerEpoch: NoProducerEpoch,
	}
	if m.state == Empty {
		return v
	}
	v.Topics = []TopicPartitions{}
	for _, tp := range m.sortedPartitions() {
		if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != tp.Topic {
			v.Topics = append(v.Topics, TopicPartitions{Topic: tp.Topic})
		}
		last := &v.Topics[len(v.Topics)-1]
		last.Partitions = append(last.Partitions, tp.Partition)
	}
	return v
}

// Replay applies one record read back from __transaction_state, in log
// order, when loading a partition: the id takes the record's state, and a
// tombstone removes it. Kafka does not persist the last producer id and
// epoch, so after a reload they are -1 (as they are in Kafka), and a
// KIP-360 retry that spans the reload is fenced. After the last record,
// call PendingMarkers.
func (c *Coordinator) Replay(r Record) error {
	if r.Value == nil {
		delete(c.txns, r.TransactionalID)
		return nil
	}
	v := r.Value
	switch v.State {
	case Dead, PrepareEpochFence:
		// Never written by Kafka; a Dead id is on its way out.
		delete(c.txns, r.TransactionalID)
		return nil
	}
	if !v.State.valid() {
		return fmt.Errorf("%w: state %d", ErrCorruptRecord, v.State)
	}
	m := &metadata{
		id: r.TransactionalID, producerID: v.ProducerID, lastProducerID: NoProducerID,
		producerEpoch: v.ProducerEpoch, lastProducerEpoch: NoProducerEpoch,
		timeoutMs: v.TimeoutMs, state: v.State, partitions: map[TopicPartition]bool{},
		startTimestamp: v.StartTimestamp, lastUpdate: v.LastUpdateTimestamp, pending: NoState,
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			m.partitions[TopicPartition{Topic: t.Topic, Partition: p}] = true
		}
	}
	switch m.state {
	case PrepareCommit:
		m.pending = CompleteCommit
	case PrepareAbort:
		m.pending = CompleteAbort
	case CompleteCommit, CompleteAbort, Empty:
		clear(m.partitions)
	}
	c.txns[m.id] = m
	return nil
}

// Partitions flattens a Value's topics, sorted.
func (v *Value) Partitions() []TopicPartition {
	var out []TopicPartition
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			out = append(out, TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	sortPartitions(out)
	return slices.Compact(out)
}

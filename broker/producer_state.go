package broker

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/metadata"
)

// Idempotent producers (KIP-98). Per partition the broker remembers, for each
// producer id, its epoch and the last few batches' sequence ranges:
//
//   - a batch whose sequence range equals a remembered one is a retry: it is
//     acknowledged with the original offsets and not appended again;
//   - otherwise its first sequence must follow the last one (wrapping at
//     MaxInt32), or be 0 for a new epoch; else OUT_OF_ORDER_SEQUENCE_NUMBER;
//   - an older epoch than the remembered one gets INVALID_PRODUCER_EPOCH;
//   - a producer the partition does not know (new, or expired) may start at
//     any sequence, as in Kafka.
//
// The table is snapshotted beside the log at every checkpoint and rebuilt on
// open from the snapshot plus the batch headers appended after it.

// producerBatchesRetained is how many recent batches per producer are kept
// for duplicate detection (Kafka's max.in.flight.requests.per.connection bound).
const producerBatchesRetained = 5

// producerIDExpiration is Kafka's producer.id.expiration.ms default.
const producerIDExpiration = 24 * time.Hour

type producerBatch struct {
	FirstSeq    int32 `json:"first_seq"`
	LastSeq     int32 `json:"last_seq"`
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
}

type producerEntry struct {
	Epoch      int16           `json:"epoch"`
	Batches    []producerBatch `json:"batches"` // oldest first, at most producerBatchesRetained
	LastUpdate int64           `json:"last_update_ms"`
}

func (e *producerEntry) lastSeq() int32 {
	if len(e.Batches) == 0 {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// producerTable is guarded by the owning partition's mutex.
type producerTable struct {
	entries map[int64]*producerEntry
}

func newProducerTable() *producerTable {
	return &producerTable{entries: map[int64]*producerEntry{}}
}

func seqAdd(seq int32, delta int32) int32 {
	sum := int64(seq) + int64(delta)
	if sum > math.MaxInt32 {
		sum -= math.MaxInt32 + 1
	}
	return int32(sum)
}

// check validates one idempotent batch against the table. It returns the
// remembered batch if h is a duplicate.
func (t *producerTable) check(h *storage.BatchHeader) (*producerBatch, int16) {
	e := t.entries[h.ProducerID]
	if e == nil {
		return nil, 0
	}
	lastSeq := seqAdd(h.BaseSequence, h.LastOffsetDelta)
	if h.ProducerEpoch < e.Epoch {
		return nil, kerr.InvalidProducerEpoch.Code
	}
	if h.ProducerEpoch > e.Epoch {
		if h.BaseSequence != 0 {
			return nil, kerr.OutOfOrderSequenceNumber.Code
		}
		return nil, 0
	}
	for i := range e.Batches {
		b := &e.Batches[i]
		if b.FirstSeq == h.BaseSequence && b.LastSeq == lastSeq {
			return b, 0
		}
	}
	if len(e.Batches) > 0 && h.BaseSequence != seqAdd(e.lastSeq(), 1) {
		return nil, kerr.OutOfOrderSequenceNumber.Code
	}
	return nil, 0
}

// record remembers an appended batch (h carries its assigned BaseOffset).
func (t *producerTable) record(h *storage.BatchHeader, nowMs int64) {
	if h.ProducerID < 0 {
		return
	}
	e := t.entries[h.ProducerID]
	if e == nil || h.ProducerEpoch > e.Epoch {
		e = &producerEntry{Epoch: h.ProducerEpoch}
		t.entries[h.ProducerID] = e
	}
	e.Batches = append(e.Batches, producerBatch{
		FirstSeq:    h.BaseSequence,
		LastSeq:     seqAdd(h.BaseSequence, h.LastOffsetDelta),
		FirstOffset: h.BaseOffset,
		LastOffset:  h.LastOffset(),
	})
	if len(e.Batches) > producerBatchesRetained {
		e.Batches = append(e.Batches[:0], e.Batches[len(e.Batches)-producerBatchesRetained:]...)
	}
	e.LastUpdate = nowMs
}

// expire drops producers idle for longer than producer.id.expiration.ms.
func (t *producerTable) expire(nowMs int64) {
	for id, e := range t.entries {
		if nowMs-e.LastUpdate > producerIDExpiration.Milliseconds() {
			delete(t.entries, id)
		}
	}
}

// producerSnapshot is the on-disk form: the table as of NextOffset.
type producerSnapshot struct {
	NextOffset int64                    `json:"next_offset"`
	Producers  map[int64]*producerEntry `json:"producers"`
}

const producerSnapshotFile = "producer-state.json"

func (t *producerTable) snapshot(nextOffset int64) ([]byte, error) {
	return json.Marshal(producerSnapshot{NextOffset: nextOffset, Producers: t.entries})
}

func writeProducerSnapshot(dir string, data []byte) error {
	return metadata.WriteFileAtomic(filepath.Join(dir, producerSnapshotFile), data)
}

// loadProducerTable rebuilds the table: the snapshot if it is usable, then
// every batch header after it.
func loadProducerTable(log *storage.Log, nowMs int64) (*producerTable, error) {
	t := newProducerTable()
	from := log.LogStartOffset()
	raw, err := os.ReadFile(filepath.Join(log.Dir(), producerSnapshotFile))
	if err == nil {
		var snap producerSnapshot
		if json.Unmarshal(raw, &snap) == nil && snap.NextOffset <= log.LogEndOffset() && snap.NextOffset >= from {
			if snap.Producers != nil {
				t.entries = snap.Producers
			}
			from = snap.NextOffset
		}
	}
	err = log.ForEachBatch(from, func(h storage.BatchHeader) error {
		if h.BaseOffset >= from {
			t.record(&h, nowMs)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rebuild producer state: %w", err)
	}
	return t, nil
}

// producerIDAllocator hands out producer ids in blocks reserved durably in
// the metadata store, so ids are never reused across restarts.
type producerIDAllocator struct {
	store metadata.Store
	mu    sync.Mutex
	next  int64
	limit int64
}

const producerIDBlock = 1000

func (a *producerIDAllocator) allocate() (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next >= a.limit {
		first, err := a.store.AllocateProducerIDs(producerIDBlock)
		if err != nil {
			return 0, err
		}
		a.next, a.limit = first, first+producerIDBlock
	}
	id := a.next
	a.next++
	return id, nil
}

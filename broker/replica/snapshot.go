package replica

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/strata-streaming/strata/broker/storage"
)

// The producer-state snapshot (doc.go, "Files"): the producer table as of
// a log offset, written atomically beside the log at every checkpoint so a
// restart replays only the batches after it.
//
//	magic    [4]byte  "SPS2"
//	crc      uint32   CRC-32C (big endian) of body
//	body     []byte   JSON: {"next_offset": N, "producers": {"<id>": entry}}
//
// A file without the magic is the checksum-less form earlier versions
// wrote (the JSON body alone) and is still read. A snapshot whose
// checksum fails, that does not parse, or that lies outside the log is
// ignored: the table is rebuilt from the log start, which is slower but
// loses nothing the log still holds.

// ProducerSnapshotFile is the snapshot's name in the replica directory.
const ProducerSnapshotFile = "producer-state.json"

var producerSnapshotMagic = [4]byte{'S', 'P', 'S', '2'}

// producerSnapshot is the snapshot body: the table as of NextOffset.
type producerSnapshot struct {
	NextOffset int64                    `json:"next_offset"`
	Producers  map[int64]*producerEntry `json:"producers"`
}

// encodeProducerSnapshot renders the table as of nextOffset in the file
// layout above.
func (t *producerTable) encodeSnapshot(nextOffset int64) ([]byte, error) {
	body, err := json.Marshal(producerSnapshot{NextOffset: nextOffset, Producers: t.entries})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 8, 8+len(body))
	copy(out, producerSnapshotMagic[:])
	binary.BigEndian.PutUint32(out[4:], storage.CRC32C(body))
	return append(out, body...), nil
}

// decodeProducerSnapshot parses a snapshot file's bytes; an error wraps
// storage.ErrCorruption.
func decodeProducerSnapshot(raw []byte) (producerSnapshot, error) {
	body := raw
	if bytes.HasPrefix(raw, producerSnapshotMagic[:]) {
		if len(raw) < 8 {
			return producerSnapshot{}, storage.CorruptionErrorf("producer snapshot: %d bytes", len(raw))
		}
		body = raw[8:]
		if got, want := storage.CRC32C(body), binary.BigEndian.Uint32(raw[4:]); got != want {
			return producerSnapshot{}, storage.CorruptionErrorf("producer snapshot: checksum %08x, want %08x", got, want)
		}
	}
	var snap producerSnapshot
	if err := json.Unmarshal(body, &snap); err != nil {
		return producerSnapshot{}, storage.CorruptionErrorf("producer snapshot: %v", err)
	}
	return snap, nil
}

func writeProducerSnapshot(dir string, data []byte) error {
	return storage.WriteFileAtomic(dir, ProducerSnapshotFile, data)
}

// loadProducerTable rebuilds the table: the snapshot if it is usable, then
// every batch after it. An unusable snapshot is logged (once, here) and
// the table rebuilt from the log start. onDisk is what the snapshot file
// holds, for Checkpoint to skip writing the same bytes again; for an empty
// log without a file it is the encoding of the empty table at the log end,
// which a restart treats the same as no file. It is nil when unknown.
func loadProducerTable(log *storage.Log, nowMs int64, logger *slog.Logger) (t *producerTable, onDisk []byte, err error) {
	t = newProducerTable()
	from := log.LogStartOffset()
	raw, err := os.ReadFile(filepath.Join(log.Dir(), ProducerSnapshotFile))
	switch {
	case errors.Is(err, os.ErrNotExist) && log.LogEndOffset() == from:
		if onDisk, err = t.encodeSnapshot(from); err != nil {
			return nil, nil, err
		}
	case err == nil:
		onDisk = raw
		snap, derr := decodeProducerSnapshot(raw)
		switch {
		case derr != nil:
			logger.Warn("producer-state snapshot unusable; rebuilding from the log", "dir", log.Dir(), "err", derr)
		case snap.NextOffset > log.LogEndOffset() || snap.NextOffset < from:
			// Outside the log (a truncation or retention since): replay all.
		default:
			for id, e := range snap.Producers {
				if e == nil {
					continue
				}
				t.entries[id] = e
				if e.txnOngoing() {
					t.ongoingTxns[id] = e.CurrentTxnFirstOffset
				} else {
					e.CurrentTxnFirstOffset = noTxn
				}
			}
			from = snap.NextOffset
		}
	case !errors.Is(err, os.ErrNotExist):
		logger.Warn("producer-state snapshot unreadable; rebuilding from the log", "dir", log.Dir(), "err", err)
	}
	err = log.ForEachBatch(from, func(h storage.BatchHeader) error {
		if h.BaseOffset < from {
			return nil
		}
		if h.IsControl() {
			return t.replayMarker(log, h)
		}
		t.record(&h, nowMs)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("rebuild producer state: %w", err)
	}
	return t, onDisk, nil
}

package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
)

const (
	txnIndexSuffix = ".txnindex"
	// txnIndexEntrySize is Kafka's AbortedTxn.TOTAL_SIZE: version int16,
	// producerId, firstOffset, lastOffset and lastStableOffset int64.
	txnIndexEntrySize = 34
	// txnIndexVersion is the only entry version Kafka defines.
	txnIndexVersion = 0
)

// ErrInvalidAbortedTxn reports an AbortedTxn that RecordAbortedTxn cannot
// take: offsets out of order, or not after the last one recorded.
var ErrInvalidAbortedTxn = errors.New("storage: invalid aborted transaction")

// AbortedTxn is one entry of the aborted-transaction index (Kafka's
// AbortedTxn): producer ProducerID aborted a transaction whose records in
// this partition span [FirstOffset, LastOffset], LastOffset being its ABORT
// marker. LastStableOffset is the partition's last stable offset once the
// abort completed; AbortedTxns uses it to know when to stop searching.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// RecordAbortedTxn adds t to the aborted-transaction index of the segment
// holding t.LastOffset, after the ABORT marker at t.LastOffset was appended
// (in practice that is the active segment). The entry is written to the
// segment's .txnindex file before RecordAbortedTxn returns, as Append writes
// records (no fsync: the next Flush or Checkpoint fsyncs it with the other
// indexes). t.LastOffset must lie in [LogStartOffset, LogEndOffset)
// (ErrOffsetOutOfRange otherwise) and be above every LastOffset recorded
// before, and 0 <= t.FirstOffset <= t.LastOffset (ErrInvalidAbortedTxn).
func (l *Log) RecordAbortedTxn(t AbortedTxn) error {
	if t.FirstOffset < 0 || t.FirstOffset > t.LastOffset {
		return fmt.Errorf("%w: first offset %d, last offset %d", ErrInvalidAbortedTxn, t.FirstOffset, t.LastOffset)
	}
	l.writeMu.Lock()
	s, err := l.txnSegmentLocked(t)
	if err != nil || s == l.activeLocked() {
		if err == nil {
			err = l.addAbortedTxnLocked(s, t)
		}
		l.writeMu.Unlock()
		return err
	}
	l.writeMu.Unlock()

	// A sealed segment (the log rolled after the marker): a clean may be
	// rewriting it, and it swaps segments under flushMu alone. Holding
	// flushMu keeps the swap out; a clean that read the segment before
	// this entry sees its index changed and gives up (segmentsIntact).
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if s, err = l.txnSegmentLocked(t); err != nil {
		return err
	}
	return l.addAbortedTxnLocked(s, t)
}

// txnSegmentLocked finds the segment t belongs in and checks that t comes
// after every entry recorded so far. Needs writeMu.
func (l *Log) txnSegmentLocked(t AbortedTxn) (*segment, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.mu.closed {
		return nil, ErrClosed
	}
	if t.LastOffset < l.mu.logStartOffset || t.LastOffset >= l.mu.logEndOffset {
		return nil, fmt.Errorf("%w: aborted transaction ends at %d, log holds [%d, %d)", ErrOffsetOutOfRange, t.LastOffset, l.mu.logStartOffset, l.mu.logEndOffset)
	}
	segments := l.mu.segments
	i := segmentIndexLocked(segments, t.LastOffset)
	for _, s := range segments[i:] {
		if n := len(s.txnIndex); n > 0 && s.txnIndex[n-1].LastOffset >= t.LastOffset {
			return nil, fmt.Errorf("%w: last offset %d not above the recorded %d", ErrInvalidAbortedTxn, t.LastOffset, s.txnIndex[n-1].LastOffset)
		}
	}
	return segments[i], nil
}

// addAbortedTxnLocked writes t to s's .txnindex file, creating it on the
// first entry, then publishes it. Needs writeMu.
func (l *Log) addAbortedTxnLocked(s *segment, t AbortedTxn) error {
	if s.txnIndexOnDisk != len(s.txnIndex) {
		return fmt.Errorf("storage: %s holds %d entries, %d in memory", s.txnIndexPath, s.txnIndexOnDisk, len(s.txnIndex))
	}
	at := int64(s.txnIndexOnDisk * txnIndexEntrySize)
	if err := writeIndexTail(s.txnIndexPath, EncodeTxnIndex([]AbortedTxn{t}), at, at+txnIndexEntrySize); err != nil {
		return fmt.Errorf("storage: write %s: %w", s.txnIndexPath, err)
	}
	if s.txnIndexOnDisk == 0 {
		l.dirUnsynced = true // the file may be new
	}
	s.txnIndexOnDisk++
	s.unsynced = true
	l.mu.Lock()
	s.txnIndex = append(s.txnIndex, t)
	l.mu.Unlock()
	return nil
}

// AbortedTxns answers a read_committed fetch of [from, upTo) as Kafka's
// collectAbortedTransactions does: the entries with LastOffset >= from and
// FirstOffset < upTo, in order, searching from the segment holding from
// onwards. The search ends at the first entry whose LastStableOffset is >=
// upTo: every transaction still open at upTo completed before that abort,
// so its marker is in the index already. Without one it runs to the log
// end, since a transaction starting below upTo may abort in any later
// segment.
func (l *Log) AbortedTxns(from, upTo int64) ([]AbortedTxn, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.mu.closed {
		return nil, ErrClosed
	}
	var out []AbortedTxn
	segments := l.mu.segments
	for _, s := range segments[segmentIndexLocked(segments, from):] {
		var complete bool
		if out, complete = CollectAbortedTxns(out, s.txnIndex, from, upTo); complete {
			return out, nil
		}
	}
	return out, nil
}

// CollectAbortedTxns is one step of AbortedTxns' search over one segment's
// entries (in offset order): it appends to out those overlapping [from,
// upTo) and reports whether the search is complete (an entry's
// LastStableOffset reached upTo). Remote segments' indexes are searched
// with it too, so local and remote reads follow one rule.
func CollectAbortedTxns(out, entries []AbortedTxn, from, upTo int64) ([]AbortedTxn, bool) {
	for _, t := range entries {
		if t.LastOffset >= from && t.FirstOffset < upTo {
			out = append(out, t)
		}
		if t.LastStableOffset >= upTo {
			return out, true
		}
	}
	return out, false
}

// EncodeTxnIndex serializes entries in the .txnindex format (see
// "Transaction index" in the package documentation), as Kafka uploads a
// segment's transaction index.
func EncodeTxnIndex(entries []AbortedTxn) []byte {
	b := make([]byte, 0, len(entries)*txnIndexEntrySize)
	for _, t := range entries {
		b = binary.BigEndian.AppendUint16(b, txnIndexVersion)
		b = binary.BigEndian.AppendUint64(b, uint64(t.ProducerID))
		b = binary.BigEndian.AppendUint64(b, uint64(t.FirstOffset))
		b = binary.BigEndian.AppendUint64(b, uint64(t.LastOffset))
		b = binary.BigEndian.AppendUint64(b, uint64(t.LastStableOffset))
	}
	return b
}

// DecodeTxnIndex parses bytes in the .txnindex format, checking whole
// 34-byte entries, version 0, 0 <= FirstOffset <= LastOffset and LastOffset
// strictly increasing. Malformed input yields an error wrapping
// ErrCorruptRemoteData; it never panics.
func DecodeTxnIndex(data []byte) ([]AbortedTxn, error) {
	entries, err := decodeTxnIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptRemoteData, err)
	}
	return entries, nil
}

func decodeTxnIndex(data []byte) ([]AbortedTxn, error) {
	if len(data)%txnIndexEntrySize != 0 {
		return nil, fmt.Errorf("%w: transaction index size %d is not a multiple of %d", errBadIndex, len(data), txnIndexEntrySize)
	}
	be := binary.BigEndian
	entries := make([]AbortedTxn, len(data)/txnIndexEntrySize)
	for i := range entries {
		b := data[i*txnIndexEntrySize:]
		if v := int16(be.Uint16(b)); v != txnIndexVersion {
			return nil, fmt.Errorf("%w: transaction index entry %d has version %d", errBadIndex, i, v)
		}
		t := AbortedTxn{
			ProducerID:       int64(be.Uint64(b[2:])),
			FirstOffset:      int64(be.Uint64(b[10:])),
			LastOffset:       int64(be.Uint64(b[18:])),
			LastStableOffset: int64(be.Uint64(b[26:])),
		}
		if t.FirstOffset < 0 || t.FirstOffset > t.LastOffset {
			return nil, fmt.Errorf("%w: transaction index entry %d spans [%d, %d]", errBadIndex, i, t.FirstOffset, t.LastOffset)
		}
		if i > 0 && t.LastOffset <= entries[i-1].LastOffset {
			return nil, fmt.Errorf("%w: transaction index entry %d not increasing", errBadIndex, i)
		}
		entries[i] = t
	}
	return entries, nil
}

// loadTxnIndex reads the recovered segment's .txnindex file, if any, and
// keeps the entries whose LastOffset lies inside the segment as recovered;
// later ones (their records were cut) are removed from the file too. A
// damaged file (torn length, bad version, entries out of order or below the
// segment) is logged and removed, leaving the index empty: the broker
// rebuilds aborted transactions from its producer state, this package
// cannot (it does not know which transactions aborted).
func (r *recovery) loadTxnIndex(s *segment) error {
	l := r.log
	data, err := os.ReadFile(s.txnIndexPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: read %s: %w", s.txnIndexPath, err)
	}
	entries, err := decodeTxnIndex(data)
	if err == nil && len(entries) > 0 && entries[0].LastOffset < s.baseOffset {
		err = fmt.Errorf("%w: transaction index entry ends at %d, below the segment base", errBadIndex, entries[0].LastOffset)
	}
	if err != nil {
		l.logger.Warn("storage: discarding damaged transaction index; aborted transactions of the segment must be rebuilt",
			"file", s.txnIndexPath, "err", err)
		if err := os.Remove(s.txnIndexPath); err != nil {
			return fmt.Errorf("storage: remove %s: %w", s.txnIndexPath, err)
		}
		l.dirUnsynced = true
		return nil
	}
	keep := len(entries)
	for keep > 0 && entries[keep-1].LastOffset >= s.nextOffset {
		keep--
	}
	if keep < len(entries) {
		l.logger.Warn("storage: dropping aborted transactions past the recovered log end",
			"file", s.txnIndexPath, "dropped", len(entries)-keep)
		if err := writeIndexTail(s.txnIndexPath, nil, 0, int64(keep*txnIndexEntrySize)); err != nil {
			return fmt.Errorf("storage: truncate %s: %w", s.txnIndexPath, err)
		}
		s.unsynced = true
	}
	s.txnIndex, s.txnIndexOnDisk = entries[:keep:keep], keep
	return nil
}

// cutTxnIndex drops, in memory, the entries whose LastOffset is at or
// after cutOffset. The slice is copied, never shortened in place, because
// readers may hold the old one. Needs writeMu and mu.
func (s *segment) cutTxnIndex(cutOffset int64) {
	keep := len(s.txnIndex)
	for keep > 0 && s.txnIndex[keep-1].LastOffset >= cutOffset {
		keep--
	}
	if keep < len(s.txnIndex) {
		s.txnIndex = slices.Clone(s.txnIndex[:keep])
	}
	s.txnIndexOnDisk = min(s.txnIndexOnDisk, keep)
}

// truncateTxnIndexFile cuts the .txnindex file to the entries still valid
// after cutTxnIndex. A missing file stays missing. Needs writeMu.
func (s *segment) truncateTxnIndexFile() error {
	size := int64(s.txnIndexOnDisk * txnIndexEntrySize)
	st, err := os.Stat(s.txnIndexPath)
	if errors.Is(err, os.ErrNotExist) || (err == nil && st.Size() == size) {
		return nil
	}
	if err == nil {
		err = os.Truncate(s.txnIndexPath, size)
	}
	if err != nil {
		return fmt.Errorf("storage: truncate %s: %w", s.txnIndexPath, err)
	}
	return nil
}

// carryTxnIndexes gives each kept clean output the aborted transactions of
// the segments it replaces: each entry goes to the last kept output whose
// base offset is <= its LastOffset (the first output if none), so that an
// empty output dropped from the swap loses nothing. The entries come from
// the views, snapshots taken when the pass was planned; swapCleaned
// refuses the swap if a segment's index grew since. Each output with
// entries gets a .txnindex.cleaned file, written and fsynced; the caller
// fsyncs the directory.
func carryTxnIndexes(views []segmentView, outputs []*cleanedOutput) error {
	var kept []*cleanedOutput
	for _, o := range outputs {
		if o.keep {
			kept = append(kept, o)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	for _, v := range views {
		for _, t := range v.txnIndex {
			i := len(kept) - 1
			for i > 0 && kept[i].seg.baseOffset > t.LastOffset {
				i--
			}
			kept[i].seg.txnIndex = append(kept[i].seg.txnIndex, t)
		}
	}
	for _, o := range kept {
		s := o.seg
		if len(s.txnIndex) == 0 {
			continue
		}
		// Views are in offset order and so are their entries.
		if err := writeSyncedFile(s.txnIndexPath+cleanedSuffix, EncodeTxnIndex(s.txnIndex)); err != nil {
			return err
		}
		s.txnIndexOnDisk = len(s.txnIndex)
	}
	return nil
}

package broker

import (
	"github.com/strata-streaming/strata/broker/storage"
	"github.com/strata-streaming/strata/tiering/iceberg"
)

// icebergArena is the memory of one commit round's records: the log bytes
// it reads and the batches it decompresses go into buffers of the writer's
// pool (iceberg.Buffer), the records into slices kept from round to round,
// and release gives it all back once the round's appends are done and
// nothing refers to the records any more. Left to the collector, a round
// of 1 KiB records made about three times its log bytes of garbage, which
// made the collector run more often for the produce path too.
//
// Only the commit loop's goroutine uses it; a nil arena allocates from the
// heap.
type icebergArena struct {
	bufs    [][]byte         // buffers handed out; the last one is being filled
	records []iceberg.Record // the round's records, kept for the next round
	decoded []storage.Record // one batch's records, reused batch to batch
}

const (
	icebergArenaChunk = 4 << 20 // the least a new arena buffer holds
	// icebergArenaKeepRecords is the most records whose slice a round
	// keeps for the next (about 7 MiB): a round of small records leaves
	// a larger one to the collector.
	icebergArenaKeepRecords = 64 << 10
)

// tail returns the buffer being filled (its length is what is used), with
// at least n bytes of spare capacity: a new buffer when the current one
// has less. Whoever fills some of the spare gives the grown slice back
// with setTail.
func (a *icebergArena) tail(n int) []byte {
	if a == nil {
		return nil
	}
	if k := len(a.bufs); k > 0 && cap(a.bufs[k-1])-len(a.bufs[k-1]) >= n {
		return a.bufs[k-1]
	}
	b := iceberg.Buffer(max(n, icebergArenaChunk))
	a.bufs = append(a.bufs, b)
	return b
}

// setTail records that tail, as tail returned it, grew to b.
func (a *icebergArena) setTail(b []byte) {
	if a != nil && len(a.bufs) > 0 {
		a.bufs[len(a.bufs)-1] = b
	}
}

// read preads chunk into the arena.
func (a *icebergArena) read(chunk storage.FileChunk) ([]byte, error) {
	if a == nil || chunk.Len <= 0 || chunk.Len > 1<<30 {
		return chunk.ReadAll()
	}
	t := a.tail(int(chunk.Len))
	data, err := chunk.ReadInto(t[len(t):])
	if err == nil {
		a.setTail(t[:len(t)+len(data)])
	}
	return data, err
}

// decode decodes one batch's records (valid until the next decode),
// decompressing into the arena.
func (a *icebergArena) decode(batch []byte) ([]storage.Record, error) {
	if a == nil {
		return storage.DecodeRecords(batch)
	}
	// A batch that inflates past the hint (lz4's guess) decompresses
	// into the heap; an uncompressed one decodes in place.
	var t []byte
	hint := storage.DecodedSizeHint(batch)
	if hint > 0 {
		t = a.tail(hint)
	}
	recs, grown, err := storage.DecodeRecordsInto(a.decoded[:0], t, batch)
	if hint > 0 {
		a.setTail(grown)
	}
	a.decoded = recs
	return recs, err
}

// release gives every buffer back to the pool and empties the records
// (their slice kept for the next round unless it is large): nothing may
// refer to what the arena held after.
func (a *icebergArena) release() {
	for _, b := range a.bufs {
		iceberg.FreeBuffer(b)
	}
	clear(a.bufs)
	a.bufs = a.bufs[:0]
	// Whole capacities: a shorter round, or an error's shorter slice,
	// leaves records past the length that still point into the buffers.
	clear(a.records[:cap(a.records)])
	a.records = a.records[:0]
	if cap(a.records) > icebergArenaKeepRecords {
		a.records = nil
	}
	clear(a.decoded[:cap(a.decoded)])
	a.decoded = a.decoded[:0]
	if cap(a.decoded) > icebergArenaKeepRecords {
		a.decoded = nil
	}
}

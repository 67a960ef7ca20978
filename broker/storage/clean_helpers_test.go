package storage

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compactConfig is testConfig for a cleanup.policy=compact topic.
func compactConfig() Config {
	cfg := testConfig()
	cfg.Compact, cfg.Delete = true, false
	return cfg
}

// put is a keyed record with a value; del is a tombstone.
func put(key, value string, ts int64) testRecord {
	return testRecord{key: []byte(key), value: []byte(value), timestamp: ts}
}

func del(key string, ts int64) testRecord { return testRecord{key: []byte(key), timestamp: ts} }

// keyed is an uncompressed batch of the given records.
func keyed(t testing.TB, records ...testRecord) []byte {
	t.Helper()
	return makeBatch(t, batchSpec{records: records})
}

// setProducer stamps producer epoch and base sequence into a batch made by
// makeBatch (which leaves them at -1) and fixes its CRC.
func setProducer(batch []byte, epoch int16, sequence int32) []byte {
	binary.BigEndian.PutUint16(batch[offsetProducerEpoch:], uint16(epoch))
	binary.BigEndian.PutUint32(batch[offsetBaseSequence:], uint32(sequence))
	binary.BigEndian.PutUint32(batch[offsetCRC:], batchCRC(batch))
	return batch
}

// logRecord is a decoded record with what identifies it in comparisons.
type logRecord struct {
	Offset    int64
	Key       string
	Value     string
	Tombstone bool
	Timestamp int64
}

func (r logRecord) String() string {
	if r.Tombstone {
		return fmt.Sprintf("%d:%s=<tombstone>", r.Offset, r.Key)
	}
	return fmt.Sprintf("%d:%s=%q", r.Offset, r.Key, r.Value)
}

// logBatch is a batch read back through Read, CRC-checked, with its records.
type logBatch struct {
	Header  BatchHeader
	Raw     []byte
	Records []logRecord
}

// readBatches reads the whole log through Read from the log start,
// validates every batch (lengths, CRC) and decodes its records. It returns
// an error rather than failing the test so readers in other goroutines can
// use it.
func readBatches(l *Log) ([]logBatch, error) {
	var out []logBatch
	end := l.LogEndOffset()
	for offset := l.LogStartOffset(); offset < end; {
		chunk, err := l.Read(offset, 1<<20, end, true)
		if err != nil {
			return nil, fmt.Errorf("Read(%d): %w", offset, err)
		}
		data, err := chunk.ReadAll()
		if err != nil {
			return nil, err
		}
		if len(data) == 0 {
			break // the rest of the log is a gap left by cleaning
		}
		progressed := false
		for len(data) >= BatchHeaderSize {
			h, err := checkBatch(data)
			if err != nil {
				if h.Size() > len(data) && progressed {
					break // Read may cut the last batch at maxBytes
				}
				return nil, fmt.Errorf("batch at offset %d: %w", offset, err)
			}
			raw := data[:h.Size()]
			records, err := DecodeRecords(raw)
			if err != nil {
				return nil, fmt.Errorf("decode batch at %d: %w", h.BaseOffset, err)
			}
			b := logBatch{Header: h, Raw: raw}
			for _, r := range records {
				b.Records = append(b.Records, logRecord{Offset: r.Offset, Key: string(r.Key), Value: string(r.Value), Tombstone: r.Value == nil, Timestamp: r.Timestamp})
			}
			out = append(out, b)
			data = data[h.Size():]
			offset = h.LastOffset() + 1
			progressed = true
		}
		if !progressed {
			return nil, fmt.Errorf("Read(%d) returned no complete batch", offset)
		}
	}
	return out, nil
}

func mustReadBatches(t testing.TB, l *Log) []logBatch {
	t.Helper()
	batches, err := readBatches(l)
	if err != nil {
		t.Fatal(err)
	}
	return batches
}

func recordsOf(batches []logBatch) []logRecord {
	var out []logRecord
	for _, b := range batches {
		out = append(out, b.Records...)
	}
	return out
}

func mustReadRecords(t testing.TB, l *Log) []logRecord {
	t.Helper()
	return recordsOf(mustReadBatches(t, l))
}

// latestValues folds records into key → latest record.
func latestValues(records []logRecord) map[string]logRecord {
	m := map[string]logRecord{}
	for _, r := range records {
		m[r.Key] = r
	}
	return m
}

func mustClean(t testing.TB, l *Log, clock *fakeClock) CleanResult {
	t.Helper()
	res, err := l.Clean(clock.Now())
	if err != nil {
		t.Fatalf("Clean: %v", err)
	}
	return res
}

// copyDir copies the regular files of src into a new directory dst.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// cleanerFiles lists the .cleaned and .swap files in dir.
func cleanerFiles(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			out = append(out, n)
		}
	}
	return out
}

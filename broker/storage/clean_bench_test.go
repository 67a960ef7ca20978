package storage

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// BenchmarkClean measures one pass over a log of 500,000 updates (32-byte
// values) to 20,000 random keys in batches of 500 records: the first clean
// of an entirely dirty log, which reads every byte twice (key map, then
// rewrite) and writes the survivors. Bytes/s are of the log before.
func BenchmarkClean(b *testing.B) {
	for _, codec := range []struct {
		name  string
		codec int8
	}{{"none", 0}, {"lz4", 3}, {"zstd", 4}} {
		b.Run(codec.name, func(b *testing.B) {
			const updates, keys, perBatch = 500_000, 20_000, 500
			cfg := compactConfig()
			cfg.SegmentBytes = 8 << 20
			cfg.IndexIntervalBytes = 4096
			clock := newFakeClock()
			template := filepath.Join(b.TempDir(), "template")
			l := openLog(b, template, cfg, clock)
			rng := rand.New(rand.NewPCG(3, 4))
			records := make([]testRecord, perBatch)
			value := make([]byte, 32)
			for i := range updates / perBatch {
				for j := range records {
					binary.BigEndian.PutUint64(value, uint64(i*perBatch+j))
					records[j] = testRecord{key: fmt.Appendf(nil, "key-%06d", rng.IntN(keys)), value: append([]byte(nil), value...), timestamp: clock.Millis()}
				}
				appendRaw(b, l, 0, makeBatch(b, batchSpec{codec: codec.codec, records: records}))
			}
			l.Roll()
			size := l.Size()
			l.Close()
			b.SetBytes(size)
			b.ResetTimer()
			var res CleanResult
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), "log")
				copyDir(b, template, dir)
				l := openLog(b, dir, cfg, clock)
				b.StartTimer()
				var err error
				if res, err = l.Clean(clock.Now()); err != nil || !res.Cleaned {
					b.Fatalf("Clean: %+v, %v", res, err)
				}
				b.StopTimer()
				l.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(res.RecordsRead)/res.Duration.Seconds(), "records/s")
			b.ReportMetric(float64(res.BytesAfter)/float64(res.BytesBefore)*100, "%kept")
		})
	}
}

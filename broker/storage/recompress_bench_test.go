package storage

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchBatchOf is a batch of n records of size bytes each, in codec:
// random (incompressible) values, or JSON-like text that compresses about
// 4:1.
func benchBatchOf(b *testing.B, codec int8, n, size int, text bool) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"order", "customer", "amount", "currency", "EUR", "status", "shipped", "pending", "warehouse", "item"}
	records := make([]testRecord, n)
	for i := range records {
		v := make([]byte, 0, size)
		for len(v) < size {
			if text {
				v = fmt.Appendf(v, `{"%s":%d,"%s":"%s"},`, words[rng.IntN(len(words))], rng.IntN(100000), words[rng.IntN(len(words))], words[rng.IntN(len(words))])
			} else {
				v = append(v, byte(rng.UintN(256)))
			}
		}
		records[i] = testRecord{key: []byte(fmt.Sprintf("key-%d", i)), value: v[:size], timestamp: 1_700_000_000_000 + int64(i)}
	}
	return makeBatch(b, batchSpec{codec: codec, records: records})
}

// BenchmarkRecompress is the produce path's cost of compression.type for
// a 256 KiB batch (256 random 1 KiB records): validating the batch (CRC),
// then storing it with the topic's codec at Kafka's default level. A batch
// already in that codec passes through untouched, so its case measures
// the validation alone. MB/s counts the records section uncompressed. The
// text/ cases use compressible records, where the codecs do real work.
func BenchmarkRecompress(b *testing.B) {
	type benchCase struct {
		from, to int8
		level    int
		text     bool
	}
	cases := []benchCase{
		{CodecZstd, CodecZstd, ZstdLevelDefault, false}, // pass-through
		{CodecNone, CodecNone, 0, false},                // pass-through
		{CodecGzip, CodecZstd, ZstdLevelDefault, false},
		{CodecSnappy, CodecZstd, ZstdLevelDefault, false},
		{CodecLZ4, CodecZstd, ZstdLevelDefault, false},
		{CodecNone, CodecZstd, ZstdLevelDefault, false},
		{CodecSnappy, CodecLZ4, LZ4LevelDefault, false},
		{CodecZstd, CodecLZ4, LZ4LevelDefault, false},
		{CodecGzip, CodecLZ4, LZ4LevelDefault, false},
		{CodecZstd, CodecSnappy, 0, false},
		{CodecZstd, CodecGzip, GzipLevelDefault, false},
		{CodecZstd, CodecNone, 0, false},
	}
	for _, c := range []benchCase{
		{CodecZstd, CodecZstd, ZstdLevelDefault, true},
		{CodecGzip, CodecZstd, ZstdLevelDefault, true},
		{CodecSnappy, CodecLZ4, LZ4LevelDefault, true},
		{CodecNone, CodecZstd, ZstdLevelDefault, true},
		{CodecZstd, CodecGzip, GzipLevelDefault, true},
	} {
		cases = append(cases, c)
	}
	const records, size = 256, 1 << 10
	for _, c := range cases {
		name := codecNames[c.from] + "-to-" + codecNames[c.to]
		if c.from == c.to {
			name += "-passthrough"
		}
		if c.text {
			name = "text/" + name
		}
		b.Run(name, func(b *testing.B) {
			batch := benchBatchOf(b, c.from, records, size, c.text)
			headers := mustValidate(b, batch)
			body, err := decompress(c.from, batch[BatchHeaderSize:])
			if err != nil {
				b.Fatal(err)
			}
			target := Compression{Codec: c.to, Level: c.level}
			limit := InflationLimit(1048588)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if headers, err = ValidateBatches(batch); err != nil {
					b.Fatal(err)
				}
				if _, _, err := Recompress(batch, headers, target, limit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

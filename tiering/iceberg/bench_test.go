package iceberg_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-streaming/strata/tiering"
	. "github.com/strata-streaming/strata/tiering/iceberg"
)

// benchRecords are n schemaless records with 1 KiB random values, 16-byte
// keys and one header, a millisecond apart.
func benchRecords(n int) []Record {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	out := make([]Record, n)
	for i := range out {
		value := make([]byte, 1024)
		for j := range value {
			value[j] = byte(rng.UintN(256))
		}
		out[i] = Record{
			Partition: int32(i % 4), Offset: int64(i / 4), Timestamp: start.Add(time.Duration(i) * time.Millisecond),
			Key: fmt.Appendf(nil, "key-%012d", i), Value: value, Headers: []Header{{Key: "source", Value: []byte("bench")}},
		}
	}
	return out
}

// BenchmarkAppendSchemaless1KiB converts and commits 10,000 schemaless 1 KiB
// records per op to a table in memory: Parquet encoding, file stats,
// manifest, manifest list and metadata. rows/s is the conversion rate of
// one goroutine.
func BenchmarkAppendSchemaless1KiB(b *testing.B) {
	const rows = 10_000
	records := benchRecords(rows)
	ctx := context.Background()
	b.SetBytes(rows * 1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tbl, err := Open(Config{Store: tiering.NewMemStore(), Prefix: "t", Location: "mem://t"})
		if err != nil {
			b.Fatal(err)
		}
		res, err := tbl.Append(ctx, records, nil)
		if err != nil || res.Rows != rows {
			b.Fatalf("append: %+v %v", res, err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

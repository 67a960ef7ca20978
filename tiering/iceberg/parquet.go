package iceberg

import (
	"bytes"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Record is one Kafka record as the table stores it.
type Record struct {
	Partition int32
	Offset    int64
	Timestamp time.Time
	Key       []byte // nil: a null key
	Value     []byte // nil: a null value (a tombstone)
	Headers   []Header
}

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// encodeParquet writes records as one Parquet file (snappy, one row group
// per 64 Ki rows) in the key_value layout of sc.
func encodeParquet(sc *arrow.Schema, records []Record) ([]byte, error) {
	rec, err := buildArrowRecord(sc, records)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(64*1024),
		parquet.WithCreatedBy("strata"),
	)
	w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("iceberg: parquet writer: %w", err)
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, fmt.Errorf("iceberg: parquet write: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("iceberg: parquet close: %w", err)
	}
	return buf.Bytes(), nil
}

// buildArrowRecord lays records out in the columns of KeyValueSchema.
func buildArrowRecord(sc *arrow.Schema, records []Record) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	if b.Schema().NumFields() != 6 {
		return nil, fmt.Errorf("iceberg: arrow schema has %d fields, want the 6 of key_value", sc.NumFields())
	}
	keyB, ok1 := b.Field(0).(*array.BinaryBuilder)
	valueB, ok2 := b.Field(1).(*array.BinaryBuilder)
	headersB, ok3 := b.Field(2).(*array.ListBuilder)
	partB, ok4 := b.Field(3).(*array.Int32Builder)
	offB, ok5 := b.Field(4).(*array.Int64Builder)
	tsB, ok6 := b.Field(5).(*array.TimestampBuilder)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return nil, fmt.Errorf("iceberg: arrow schema %s is not the key_value layout", sc)
	}
	hdrStruct, ok := headersB.ValueBuilder().(*array.StructBuilder)
	if !ok {
		return nil, fmt.Errorf("iceberg: headers column is not a list of structs")
	}
	hdrKey, okk := hdrStruct.FieldBuilder(0).(*array.StringBuilder)
	hdrValue, okv := hdrStruct.FieldBuilder(1).(*array.BinaryBuilder)
	if !okk || !okv {
		return nil, fmt.Errorf("iceberg: header struct is not (string key, binary value)")
	}
	unit := sc.Field(5).Type.(*arrow.TimestampType).Unit
	for i := range records {
		r := &records[i]
		appendBinary(keyB, r.Key)
		appendBinary(valueB, r.Value)
		headersB.Append(true)
		for _, h := range r.Headers {
			hdrStruct.Append(true)
			hdrKey.Append(h.Key)
			appendBinary(hdrValue, h.Value)
		}
		partB.Append(r.Partition)
		offB.Append(r.Offset)
		ts, err := arrow.TimestampFromTime(r.Timestamp, unit)
		if err != nil {
			return nil, fmt.Errorf("iceberg: record %d/%d timestamp: %w", r.Partition, r.Offset, err)
		}
		tsB.Append(ts)
	}
	return b.NewRecordBatch(), nil
}

func appendBinary(b *array.BinaryBuilder, v []byte) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(v)
}

package iceberg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
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
	// Fields is the value's columns in a typed table (LayoutTyped), as
	// CoerceValue returns them; unused in key_value tables.
	Fields map[string]any
}

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// encodeParquet writes records as one Parquet file (snappy, one row group
// per 64 Ki rows) in the layout of sc, pacing as it goes.
func encodeParquet(ctx context.Context, pace *PaceCounter, sc *arrow.Schema, layout Layout, records []Record, sizeHint int64) ([]byte, error) {
	build := buildArrowRecord
	if layout == LayoutTyped {
		build = buildTypedRecord
	}
	rec, err := build(ctx, pace, sc, records)
	if err != nil {
		return nil, err
	}
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	rec.Release()
	defer tbl.Release()
	return writeParquet(ctx, pace, sc, tbl, sizeHint)
}

// parquetRowGroupRows is the most rows a row group of a data file holds.
const parquetRowGroupRows = 64 * 1024

// parquetPieceRows is how many rows writeParquet hands the writer at a
// time, pacing after each: every piece costs the buffered row group some
// copying (512-row pieces took 20% more CPU than one write per file in
// BenchmarkAppendSchemaless1KiB, 4096-row ones about 5%), so these are
// coarser than PaceRows; 4096 rows of 1 KiB are about 10 ms of CPU.
const parquetPieceRows = 4096

// writeParquet makes one Parquet file of schema sc (snappy, row groups of
// at most parquetRowGroupRows, the arrow schema stored) of tbl's rows. It
// writes them parquetPieceRows at a time into buffered row groups, pacing
// between the pieces (encoding and compression are most of a conversion's
// CPU). The file and the writer's buffers come from writerMem: the caller
// gives the file back with FreeBuffer once it is stored.
// sizeHint is about the file's size: its buffer is allocated once.
func writeParquet(ctx context.Context, pace *PaceCounter, sc *arrow.Schema, tbl arrow.Table, sizeHint int64) ([]byte, error) {
	buf := &fileBuffer{b: fileBufferFor(int(min(max(sizeHint, 0), 1<<30)))}
	data, err := writeParquetTo(ctx, pace, sc, tbl, buf)
	if err != nil {
		FreeBuffer(buf.b)
		return nil, err
	}
	return data, nil
}

// fileBufferFor is an empty buffer for a file of about hint bytes: with
// 64 KiB to spare (the footer, the estimate's error), from the pool unless
// the spare would take it to the next power of two (a file cut at a
// target of 128 MiB would reserve 256), then from the heap at that size.
func fileBufferFor(hint int) []byte {
	n := hint + 64<<10
	if c := poolClass(n); c > 0 && poolClass(hint) == c-1 {
		return make([]byte, 0, n)
	}
	return Buffer(n)
}

// fileBuffer is an io.Writer appending to a buffer of writerMem.
type fileBuffer struct{ b []byte }

func (w *fileBuffer) Write(p []byte) (int, error) {
	if n := len(w.b); n+len(p) > cap(w.b) {
		grown := Buffer(max(2*cap(w.b), n+len(p)))[:n]
		copy(grown, w.b)
		FreeBuffer(w.b)
		w.b = grown
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

func writeParquetTo(ctx context.Context, pace *PaceCounter, sc *arrow.Schema, tbl arrow.Table, buf *fileBuffer) ([]byte, error) {
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(writerMem),
		// Every offset is a new value: a dictionary would hash them all
		// and come out larger than the plain column.
		parquet.WithDictionaryFor("offset", false),
		parquet.WithDictionaryFor(KafkaColumn+".offset", false),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(parquetRowGroupRows),
		parquet.WithCreatedBy("strata"),
	)
	w, err := pqarrow.NewFileWriter(sc, buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(writerMem)))
	if err != nil {
		return nil, fmt.Errorf("iceberg: parquet writer: %w", err)
	}
	pieces := array.NewTableReader(tbl, parquetPieceRows)
	defer pieces.Release()
	for pieces.Next() {
		rec := pieces.RecordBatch()
		// A full row group is closed here: WriteBuffered would start the
		// next one with an empty write.
		if n, err := w.RowGroupNumRows(); err == nil && n >= parquetRowGroupRows {
			err = w.NewBufferedRowGroupChecked()
			if err != nil {
				w.Close()
				return nil, fmt.Errorf("iceberg: parquet row group: %w", err)
			}
		}
		if err := w.WriteBuffered(rec); err != nil {
			w.Close()
			return nil, fmt.Errorf("iceberg: parquet write: %w", err)
		}
		if err := pace.Add(ctx, int(rec.NumRows()), 0); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("iceberg: parquet close: %w", err)
	}
	return buf.b, nil
}

// readParquet reads a whole Parquet data file as an arrow table (the
// caller releases it), PaceRows rows at a time, pacing between them.
func readParquet(ctx context.Context, pace *PaceCounter, data []byte) (arrow.Table, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: PaceRows}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for rr.Next() {
		rec := rr.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
		if err := pace.Add(ctx, int(rec.NumRows()), 0); err != nil {
			return nil, err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return array.NewTableFromRecords(sc, recs), nil
}

// recordSize estimates the bytes a record takes in a data file before
// compression: its key, value (a typed row's fields come from it) and
// headers, and about 24 bytes of partition, offset and timestamp.
func recordSize(r *Record) int64 {
	n := int64(len(r.Key) + len(r.Value) + 24)
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value) + 8)
	}
	return n
}

// cutByBudget splits records after the first run of about budget bytes
// (recordSize; at least one record), and returns that run's estimate.
func cutByBudget(records []Record, budget int64) (run, rest []Record, estimate int64) {
	for i := range records {
		n := recordSize(&records[i])
		if i > 0 && estimate+n > budget {
			return records[:i], records[i:], estimate
		}
		estimate += n
	}
	return records, nil, estimate
}

// buildArrowRecord lays records out in the columns of KeyValueSchema.
func buildArrowRecord(ctx context.Context, pace *PaceCounter, sc *arrow.Schema, records []Record) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(writerMem, sc)
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
	// Sized once: a builder left to grow doubles its buffers, allocating
	// and copying about three times the data (most of a conversion's
	// garbage, which the collector then takes from produce).
	var keyBytes, valueBytes, headers, hdrKeyBytes, hdrValueBytes int
	for i := range records {
		r := &records[i]
		keyBytes += len(r.Key)
		valueBytes += len(r.Value)
		headers += len(r.Headers)
		for _, h := range r.Headers {
			hdrKeyBytes += len(h.Key)
			hdrValueBytes += len(h.Value)
		}
	}
	n := len(records)
	keyB.Reserve(n)
	keyB.ReserveData(keyBytes)
	valueB.Reserve(n)
	valueB.ReserveData(valueBytes)
	headersB.Reserve(n)
	hdrStruct.Reserve(headers)
	hdrKey.Reserve(headers)
	hdrKey.ReserveData(hdrKeyBytes)
	hdrValue.Reserve(headers)
	hdrValue.ReserveData(hdrValueBytes)
	partB.Reserve(n)
	offB.Reserve(n)
	tsB.Reserve(n)
	for i := range records {
		r := &records[i]
		if err := pace.Add(ctx, 1, int(recordSize(r))); err != nil {
			return nil, err
		}
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

// buildTypedRecord lays records out in the columns of a typed table:
// KafkaColumn from the record's coordinates, every other column from
// Fields by name (absent: null).
func buildTypedRecord(ctx context.Context, pace *PaceCounter, sc *arrow.Schema, records []Record) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(writerMem, sc)
	defer b.Release()
	for i := range records {
		r := &records[i]
		if err := pace.Add(ctx, 1, int(recordSize(r))); err != nil {
			return nil, err
		}
		headers := make([]any, len(r.Headers))
		for j, h := range r.Headers {
			var value any
			if h.Value != nil {
				value = h.Value
			}
			headers[j] = map[string]any{"key": h.Key, "value": value}
		}
		var key any
		if r.Key != nil {
			key = r.Key
		}
		kafka := map[string]any{
			"partition": r.Partition, "offset": r.Offset, "timestamp": r.Timestamp.UnixMicro(),
			"key": key, "headers": headers,
		}
		for j, f := range sc.Fields() {
			v := r.Fields[f.Name]
			if f.Name == KafkaColumn {
				v = kafka
			}
			if err := appendArrow(b.Field(j), v); err != nil {
				return nil, fmt.Errorf("iceberg: record %d/%d column %s: %w", r.Partition, r.Offset, f.Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// appendArrow appends v, a value in CoerceValue's Go types, to b. A column
// wider than the value (long for an int, double for a float: the table was
// promoted by a later schema) takes it.
func appendArrow(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	ok := true
	switch b := b.(type) {
	case *array.BooleanBuilder:
		var x bool
		if x, ok = v.(bool); ok {
			b.Append(x)
		}
	case *array.Int32Builder:
		var x int32
		if x, ok = v.(int32); ok {
			b.Append(x)
		}
	case *array.Int64Builder:
		switch x := v.(type) {
		case int64:
			b.Append(x)
		case int32:
			b.Append(int64(x))
		default:
			ok = false
		}
	case *array.Float32Builder:
		var x float32
		if x, ok = v.(float32); ok {
			b.Append(x)
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float64:
			b.Append(x)
		case float32:
			b.Append(float64(x))
		default:
			ok = false
		}
	case *array.Decimal128Builder:
		var x decimal128.Num
		if x, ok = v.(decimal128.Num); ok {
			b.Append(x)
		}
	case *array.StringBuilder:
		var x string
		if x, ok = v.(string); ok {
			b.Append(x)
		}
	case *array.BinaryBuilder:
		var x []byte
		if x, ok = v.([]byte); ok {
			b.Append(x)
		}
	case *array.FixedSizeBinaryBuilder:
		var x []byte
		if x, ok = v.([]byte); ok {
			b.Append(x)
		}
	case *array.Date32Builder:
		var x int32
		if x, ok = v.(int32); ok {
			b.Append(arrow.Date32(x))
		}
	case *array.Time64Builder:
		var x int64
		if x, ok = v.(int64); ok {
			b.Append(arrow.Time64(x))
		}
	case *array.TimestampBuilder:
		var x int64
		if x, ok = v.(int64); ok {
			b.Append(arrow.Timestamp(x))
		}
	case *array.StructBuilder:
		var m map[string]any
		if m, ok = v.(map[string]any); ok {
			b.Append(true)
			st := b.Type().(*arrow.StructType)
			for i, f := range st.Fields() {
				if err := appendArrow(b.FieldBuilder(i), m[f.Name]); err != nil {
					return fmt.Errorf("%s: %w", f.Name, err)
				}
			}
		}
	case *array.MapBuilder:
		var entries []mapEntry
		if entries, ok = v.([]mapEntry); ok {
			b.Append(true)
			for _, e := range entries {
				b.KeyBuilder().(*array.StringBuilder).Append(e.key)
				if err := appendArrow(b.ItemBuilder(), e.value); err != nil {
					return fmt.Errorf("%s: %w", e.key, err)
				}
			}
		}
	case *array.ListBuilder:
		var items []any
		if items, ok = v.([]any); ok {
			b.Append(true)
			for _, item := range items {
				if err := appendArrow(b.ValueBuilder(), item); err != nil {
					return err
				}
			}
		}
	default:
		return fmt.Errorf("no writer for column type %s", b.Type())
	}
	if !ok {
		return fmt.Errorf("%T for a %s column", v, b.Type())
	}
	return nil
}

package iceberg

import (
	"bytes"
	"context"
	"flag"
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/strata-streaming/strata/tiering"
)

// Every test of the package runs with freed buffers overwritten: a reader
// of a buffer after its free (the writer's file, an Arrow buffer) sees
// 0xA5 instead of the rows it expects. Benchmarks run without, as the
// broker does.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		PoisonFreedBuffers()
	}
	os.Exit(m.Run())
}

func TestBufferPoolClasses(t *testing.T) {
	for _, c := range []struct{ n, class int }{
		{0, -1}, {1, -1}, {4095, -1}, {4096, 0}, {4097, 1}, {8192, 1}, {1 << 20, 8}, {1<<20 + 1, 9}, {1 << 28, 16}, {1<<28 + 1, -1},
	} {
		if got := poolClass(c.n); got != c.class {
			t.Errorf("poolClass(%d) = %d, want %d", c.n, got, c.class)
		}
	}
}

func TestBufferPoolReusesZeroedAlignedBuffers(t *testing.T) {
	p := &bufferPool{}
	for _, size := range []int{100, 4096, 5000, 1 << 20, 3<<20 + 7} {
		b := p.Allocate(size)
		if len(b) != size {
			t.Fatalf("Allocate(%d): len %d", size, len(b))
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 != 0 {
			t.Fatalf("Allocate(%d) is not 64-byte aligned", size)
		}
		if size >= 4096 && cap(b)&(cap(b)-1) != 0 {
			t.Fatalf("Allocate(%d): capacity %d is not its class's", size, cap(b))
		}
		for i := range b {
			b[i] = 0xff
		}
		p.Free(b)
		// The pool may hand the same buffer back (or not, if the
		// collector ran): either way it comes zeroed.
		again := p.Allocate(size)
		if i := bytes.IndexFunc(again, func(r rune) bool { return r != 0 }); i >= 0 {
			t.Fatalf("Allocate(%d) after a free: byte %d is not zero", size, i)
		}
		p.Free(again)
	}
}

func TestBufferPoolReallocateKeepsContents(t *testing.T) {
	p := &bufferPool{poison: true}
	b := p.Allocate(5000)
	for i := range b {
		b[i] = byte(i)
	}
	old := b
	b = p.Reallocate(20000, b)
	if len(b) != 20000 || cap(b) != 32768 {
		t.Fatalf("Reallocate: len %d cap %d, want 20000 and 32768", len(b), cap(b))
	}
	for i := range 5000 {
		if b[i] != byte(i) {
			t.Fatalf("byte %d: %d after Reallocate, want %d", i, b[i], byte(i))
		}
	}
	for i := 5000; i < len(b); i++ {
		if b[i] != 0 {
			t.Fatalf("byte %d past the old length is %d, want 0", i, b[i])
		}
	}
	// The old buffer went back to the pool, poisoned.
	if old[:cap(old)][0] != 0xA5 {
		t.Fatalf("the buffer Reallocate replaced was not freed")
	}
	// Growing in place zeroes what it adds, as a new buffer would be.
	d := p.Allocate(5000)
	full := d[:cap(d)]
	for i := range full {
		full[i] = 0xff
	}
	d = p.Reallocate(8000, d)
	if i := bytes.IndexFunc(d[5000:], func(r rune) bool { return r != 0 }); i >= 0 {
		t.Fatalf("byte %d grown in place is not zero", 5000+i)
	}
	// Shrinking and growing within the capacity stay in place.
	if s := p.Reallocate(100, b); unsafe.SliceData(s) != unsafe.SliceData(b) || len(s) != 100 {
		t.Fatalf("Reallocate to a smaller size moved the buffer")
	}
	// A buffer of no class (Go heap) is left alone.
	small := p.Allocate(100)
	small[0] = 7
	p.Free(small)
	if small[0] != 7 {
		t.Fatalf("Free of a Go-heap buffer touched it")
	}
}

// A file's buffer has 64 KiB to spare, and never doubles for it.
func TestFileBufferFor(t *testing.T) {
	for _, c := range []struct{ hint, cap int }{
		{0, 64 << 10}, {1000, 128 << 10}, {100 << 20, 128 << 20}, {128 << 20, 128<<20 + 64<<10}, {128<<20 - 1000, 128<<20 + 64<<10 - 1000},
	} {
		if b := fileBufferFor(c.hint); len(b) != 0 || cap(b) != c.cap {
			t.Errorf("fileBufferFor(%d): len %d cap %d, want 0 and %d", c.hint, len(b), cap(b), c.cap)
		}
	}
}

// The data file's description (stats, bounds) is a copy: the file's buffer
// is freed, and overwritten, once it is stored.
func TestDataFileDescriptionOutlivesItsBuffer(t *testing.T) {
	ctx := context.Background()
	tbl, err := Open(Config{Store: tiering.NewMemStore(), Prefix: "t", Location: "mem://t"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := tbl.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	schema := st.Metadata.CurrentSchema()
	asc, err := arrowSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for o := int64(100); o < 200; o++ {
		recs = append(recs, Record{Partition: 3, Offset: o, Timestamp: time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC), Key: []byte("k"), Value: bytes.Repeat([]byte{'v'}, 1000)})
	}
	data, err := encodeParquet(ctx, NewPaceCounter(nil), asc, LayoutKeyValue, recs, 0)
	if err != nil {
		t.Fatal(err)
	}
	df, err := dataFile(ctx, "file:///x.parquet", data, schema, st.Metadata.PartitionSpec(), st.Metadata.Properties())
	if err != nil {
		t.Fatal(err)
	}
	FreeBuffer(data)
	if df.Count() != 100 {
		t.Fatalf("record count %d, want 100", df.Count())
	}
	offset, ok := schema.FindFieldByName("offset")
	if !ok {
		t.Fatal("no offset column")
	}
	lower, upper := df.LowerBoundValues()[offset.ID], df.UpperBoundValues()[offset.ID]
	if !bytes.Equal(lower, le64(100)) || !bytes.Equal(upper, le64(199)) {
		t.Fatalf("offset bounds %x..%x after the file's buffer was freed, want 100..199", lower, upper)
	}
}

func le64(v int64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

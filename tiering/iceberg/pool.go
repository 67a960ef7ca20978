package iceberg

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The writer's buffers are recycled: converting 10,000 records of 1 KiB
// allocated about ten times their size (Arrow builders, Parquet pages, the
// file), and on a broker every byte of that garbage makes the collector
// run more often for the produce path too. Arrow and Parquet free what
// they allocate (reference counts, as they would with C's malloc), so an
// allocator that keeps freed buffers for the next file turns most of it
// into reuse.

const (
	poolMinShift = 12 // 4 KiB: smaller buffers come from the Go heap
	poolMaxShift = 28 // 256 MiB: larger ones too
)

// bufferPool is a memory.Allocator whose buffers of 4 KiB to 256 MiB have
// a power-of-two capacity and go back, when freed, to a sync.Pool of their
// size (emptied by the collector when unused, so an idle writer holds
// nothing for long). Buffers come zeroed, as from memory.GoAllocator.
type bufferPool struct {
	classes [poolMaxShift - poolMinShift + 1]sync.Pool // of *[]byte
	boxes   sync.Pool                                  // empty *[]byte, to put buffers in
	// poison, in tests, overwrites freed buffers, so that a read after a
	// free shows up as wrong data.
	poison bool
}

// writerMem is the allocator of every Parquet file the writer builds,
// and the pool of Buffer.
var writerMem = &bufferPool{}

// goMem serves the sizes the pool does not keep.
var goMem = memory.NewGoAllocator()

// Buffer returns a buffer of length 0 and a capacity of at least n from
// the pool the writer's Parquet files are built in (not zeroed). Give it
// back with FreeBuffer once nothing refers to it.
func Buffer(n int) []byte { return writerMem.get(n, false)[:0] }

// FreeBuffer gives b, from Buffer, back to the pool; b must not be used
// after.
func FreeBuffer(b []byte) { writerMem.Free(b) }

var _ memory.Allocator = (*bufferPool)(nil)

// class is the pool of a buffer of capacity n; -1 outside the pooled
// sizes.
func poolClass(n int) int {
	if n <= 1<<poolMinShift {
		if n == 1<<poolMinShift {
			return 0
		}
		return -1
	}
	shift := bits.Len(uint(n - 1)) // the power of two at or above n
	if shift > poolMaxShift {
		return -1
	}
	return shift - poolMinShift
}

// Allocate returns a zeroed buffer of size bytes, 64-byte aligned.
func (p *bufferPool) Allocate(size int) []byte {
	return p.get(size, true)
}

// get returns a buffer of length size (zeroed if zero is set), with the
// capacity of its class.
func (p *bufferPool) get(size int, zero bool) []byte {
	c := poolClass(size)
	if c < 0 || size < 1<<poolMinShift {
		return goMem.Allocate(size)
	}
	if box, ok := p.classes[c].Get().(*[]byte); ok {
		b := (*box)[:size]
		*box = nil
		p.boxes.Put(box)
		if zero {
			clear(b)
		}
		return b
	}
	// Go's allocations of a power of two of at least 4 KiB start on a
	// 4 KiB boundary (their size class or their own pages), which is
	// the 64 bytes Arrow aligns to.
	b := make([]byte, 1<<(c+poolMinShift))
	if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%64 != 0 {
		return goMem.Allocate(size)
	}
	return b[:size]
}

// Reallocate grows or shrinks b to size, in place when its capacity allows.
func (p *bufferPool) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		// Zeroed like a new buffer: a pooled one's capacity past its
		// length holds an earlier user's bytes.
		if size > len(b) {
			clear(b[len(b):size])
		}
		return b[:size]
	}
	nb := p.get(size, false)
	n := copy(nb, b)
	clear(nb[n:])
	p.Free(b)
	return nb
}

// Free takes b back into its class's pool; a buffer of no class (from the
// Go heap) is left to the collector.
func (p *bufferPool) Free(b []byte) {
	n := cap(b)
	c := poolClass(n)
	if c < 0 || n != 1<<(c+poolMinShift) {
		return
	}
	b = b[:n]
	if p.poison {
		for i := range b {
			b[i] = 0xA5
		}
	}
	box, _ := p.boxes.Get().(*[]byte)
	if box == nil {
		box = new([]byte)
	}
	*box = b
	p.classes[c].Put(box)
}

// PoisonFreedBuffers makes the pool overwrite every buffer it takes back,
// for tests: something that reads a buffer after freeing it then reads
// 0xA5 bytes instead of its data. Call it before any conversion starts.
func PoisonFreedBuffers() { writerMem.poison = true }

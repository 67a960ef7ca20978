package iceberg

import "context"

// Pacer lets the caller bound the CPU a conversion takes. The table calls
// Pace between pieces of work of about PaceRows rows or PaceBytes bytes
// while it builds Arrow columns, writes Parquet and reads files back for a
// compaction; Pace may sleep to leave the CPU to others, and returns ctx's
// error (the append or compaction then fails with it, committing nothing)
// if ctx ends first.
type Pacer interface {
	Pace(ctx context.Context) error
}

// The size of the pieces of work between two Pace calls: at about 150,000
// rows/s of 1 KiB per core (BenchmarkAppendSchemaless1KiB), 512 such rows
// are about 3 ms of CPU.
const (
	PaceRows  = 512
	PaceBytes = 1 << 20
)

// PaceCounter calls a Pacer after every PaceRows rows or PaceBytes bytes of
// work it is told about. The zero value and one of a nil Pacer never pace.
type PaceCounter struct {
	pacer       Pacer
	rows, bytes int
}

// NewPaceCounter counts work for p (nil: no pacing).
func NewPaceCounter(p Pacer) *PaceCounter { return &PaceCounter{pacer: p} }

// Add counts rows and bytes of work done and paces when a piece is
// complete; its error is ctx's.
func (c *PaceCounter) Add(ctx context.Context, rows, bytes int) error {
	if c == nil || c.pacer == nil {
		return nil
	}
	c.rows += rows
	c.bytes += bytes
	if c.rows < PaceRows && c.bytes < PaceBytes {
		return nil
	}
	c.rows, c.bytes = 0, 0
	return c.pacer.Pace(ctx)
}

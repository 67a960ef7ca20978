package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchBatch is a 16 KiB batch of 16 records of 1 KiB.
func benchBatch(b *testing.B) ([]byte, []BatchHeader) {
	batch := valueBatch(b, 16, 1000, 1)
	headers, err := ValidateBatches(batch)
	if err != nil {
		b.Fatal(err)
	}
	return batch, headers
}

func benchLog(b *testing.B, cfg Config) *Log {
	l, err := Open(filepath.Join(b.TempDir(), "bench-0"), cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name          string
		flushMessages int64
	}{{"no-fsync", DefaultConfig().FlushMessages}, {"fsync-every-append", 16}} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.SegmentBytes = 64 << 20
			cfg.RetentionBytes = 256 << 20 // keep the disk footprint bounded
			cfg.FlushMessages = bc.flushMessages
			l := benchLog(b, cfg)
			batch, headers := benchBatch(b)
			b.SetBytes(int64(len(batch)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := l.Append(batch, headers, AppendOptions{}); err != nil {
					b.Fatal(err)
				}
				if i%4096 == 4095 {
					if _, err := l.ApplyRetention(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkValidateBatches(b *testing.B) {
	batch, _ := benchBatch(b)
	b.SetBytes(int64(len(batch)))
	for i := 0; i < b.N; i++ {
		if _, err := ValidateBatches(batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 32 << 20
	l := benchLog(b, cfg)
	batch, headers := benchBatch(b)
	for l.Size() < 128<<20 {
		if _, err := l.Append(batch, headers, AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	const chunk = 1 << 20
	b.SetBytes(chunk)
	b.ResetTimer()
	offset := int64(0)
	for i := 0; i < b.N; i++ {
		c, err := l.Read(offset, chunk, l.LogEndOffset(), true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.ReadAll(); err != nil {
			b.Fatal(err)
		}
		// Continue mid-batch after the chunk, as a consumer would.
		offset += int64(c.Len) / int64(len(batch)) * 16
		if offset >= l.LogEndOffset()-16 {
			offset = 0
		}
	}
}

func BenchmarkRecovery(b *testing.B) {
	for _, bc := range []struct {
		name string
		tail bool
	}{{"clean-64MiB-open-close", false}, {"unclean-8MiB-tail", true}} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.SegmentBytes = 16 << 20
			dir := filepath.Join(b.TempDir(), "bench-0")
			l, err := Open(dir, cfg, Options{})
			if err != nil {
				b.Fatal(err)
			}
			batch, headers := benchBatch(b)
			fill := func(l *Log, n int64) {
				for start := l.Size(); l.Size()-start < n; {
					if _, err := l.Append(batch, headers, AppendOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			}
			fill(l, 64<<20)
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if bc.tail {
					b.StopTimer()
					l, err := Open(dir, cfg, Options{})
					if err != nil {
						b.Fatal(err)
					}
					// Leave an 8 MiB tail after the checkpoint and die.
					if err := l.TruncateTo(l.LogEndOffset() - (8<<20)/int64(len(batch))*16); err != nil {
						b.Fatal(err)
					}
					fill(l, 8<<20)
					l.abandon()
					b.StartTimer()
				}
				l, err := Open(dir, cfg, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if bc.tail {
					b.SetBytes(l.RecoveryStats().BytesScanned)
				}
				l.Close()
			}
		})
	}
}

// BenchmarkOpenSealedSegments opens (and closes) a cleanly closed log of
// n sealed segments and its active one, as a broker restart does for each
// partition. fds/op is how many file descriptors the open log holds.
func BenchmarkOpenSealedSegments(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("segments=%d", n), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.SegmentBytes = 4 << 10
			dir := filepath.Join(b.TempDir(), "bench-0")
			l, err := Open(dir, cfg, Options{})
			if err != nil {
				b.Fatal(err)
			}
			batch, headers := benchBatch(b) // 16 KiB: one batch per segment
			for l.NumSegments() <= n {
				if _, err := l.Append(append([]byte(nil), batch...), headers, AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var fds int
			for i := 0; i < b.N; i++ {
				l, err := Open(dir, cfg, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					fds = openFDs()
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					fds -= openFDs()
				}
			}
			b.ReportMetric(float64(fds), "fds/op")
		})
	}
}

// openFDs counts the process's open file descriptors (Linux; 0 elsewhere).
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}

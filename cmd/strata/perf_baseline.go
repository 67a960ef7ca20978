package main

// strata perf baseline: the machine's own limits, measured in the same run
// as the broker figures so that those can be given as ratios: sequential
// disk write with fdatasync, a read of that file from the page cache, and
// loopback TCP.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// baselineBufferBytes is the size of each write and read.
const baselineBufferBytes = 1 << 20

// perfBaselineOptions are baseline's flags.
type perfBaselineOptions struct {
	dir      string
	size     byteSize
	duration time.Duration
}

func newPerfBaselineCmd() *cobra.Command {
	opts := perfBaselineOptions{size: 1 << 30}
	cmd := &cobra.Command{
		Use:   "baseline --dir DIR [--size 1GiB] [--duration 10s]",
		Short: "Measure this machine's disk write, page-cache read and loopback TCP speeds",
		Long: `Measure the limits a broker on this machine works within, one line each
(MB = 1024*1024 bytes):

  disk write   --size of random (incompressible) bytes written in 1 MiB
               writes to a file in --dir, then fdatasync; the time includes
               the sync (as dd conv=fdatasync)
  page cache   that file read back in 1 MiB reads after one warming read,
               over and over for --duration
  loopback TCP a Go sender and receiver on 127.0.0.1 (a free port), 1 MiB
               writes, for --duration

The file is removed at the end.`,
		Example: `  strata perf baseline --dir /var/lib/strata --size 1GiB --duration 10s`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPerfBaseline(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.dir, "dir", "", "directory for the scratch file, on the disk to measure (required)")
	f.Var(&opts.size, "size", "bytes to write (bytes or KiB, MiB, GiB)")
	f.DurationVar(&opts.duration, "duration", 10*time.Second, "how long the page-cache read and the TCP test each run")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}

func runPerfBaseline(cmd *cobra.Command, opts perfBaselineOptions) error {
	if opts.duration <= 0 {
		return errors.New("--duration must be positive")
	}
	out := cmd.OutOrStdout()
	f, err := os.CreateTemp(opts.dir, "strata-baseline-*.tmp")
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()

	written, took, err := baselineWrite(f, int64(opts.size))
	if err != nil {
		return err
	}
	fmt.Fprintln(out, baselineLine("disk write (fdatasync)", written, took))

	read, took, err := baselineCachedRead(f, opts.duration)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, baselineLine("page cache read", read, took))

	ctx, cancel := context.WithTimeout(commandContext(cmd), opts.duration)
	defer cancel()
	sent, took, err := baselineLoopbackTCP(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, baselineLine("loopback TCP", sent, took))
	return nil
}

// baselineLine is one figure: "name: B bytes in S s, X MB/sec".
func baselineLine(name string, bytes int64, took time.Duration) string {
	return fmt.Sprintf("baseline %s: %d bytes in %s s, %s MB/sec",
		name, bytes, javaFixed(took.Seconds(), 3), javaFixed(float64(bytes)/took.Seconds()/bytesPerMB, 1))
}

// baselineWrite writes size random bytes to f and syncs its data.
func baselineWrite(f *os.File, size int64) (int64, time.Duration, error) {
	// A few distinct random megabytes, cycled, so no filesystem or device
	// compresses them; generating them is not timed.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	chunks := make([][]byte, 4)
	for i := range chunks {
		chunks[i] = make([]byte, baselineBufferBytes)
		fillRandomBytes(chunks[i], rng)
	}
	start := time.Now()
	var written int64
	for i := 0; written < size; i++ {
		chunk := chunks[i%len(chunks)][:min(int64(baselineBufferBytes), size-written)]
		n, err := f.Write(chunk)
		written += int64(n)
		if err != nil {
			return written, 0, fmt.Errorf("write %s: %w", f.Name(), err)
		}
	}
	if err := fdatasync(f); err != nil {
		return written, 0, fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	return written, time.Since(start), nil
}

// baselineCachedRead reads f once to have it cached, then reads it again
// and again until d has passed (at least once).
func baselineCachedRead(f *os.File, d time.Duration) (int64, time.Duration, error) {
	buf := make([]byte, baselineBufferBytes)
	readAll := func() (int64, error) {
		n, err := io.CopyBuffer(io.Discard, io.NewSectionReader(f, 0, 1<<62), buf)
		if err != nil {
			return n, fmt.Errorf("read %s: %w", f.Name(), err)
		}
		return n, nil
	}
	if _, err := readAll(); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	var total int64
	for total == 0 || time.Since(start) < d {
		n, err := readAll()
		if err != nil {
			return total, 0, err
		}
		if n == 0 {
			return 0, 0, fmt.Errorf("read %s: the file is empty", f.Name())
		}
		total += n
	}
	return total, time.Since(start), nil
}

// baselineLoopbackTCP sends 1 MiB writes from one goroutine to another
// over 127.0.0.1 until ctx ends and returns what the receiver got.
func baselineLoopbackTCP(ctx context.Context) (int64, time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, fmt.Errorf("loopback listen: %w", err)
	}
	defer ln.Close()
	type result struct {
		bytes int64
		err   error
	}
	received := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			received <- result{err: err}
			return
		}
		defer c.Close()
		n, err := io.CopyBuffer(io.Discard, c, make([]byte, baselineBufferBytes))
		received <- result{bytes: n, err: err}
	}()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return 0, 0, fmt.Errorf("loopback dial: %w", err)
	}
	buf := make([]byte, baselineBufferBytes)
	fillRandomBytes(buf, rand.New(rand.NewPCG(2, 3)))
	start := time.Now()
	var sendErr error
	for ctx.Err() == nil && sendErr == nil {
		_, sendErr = c.Write(buf)
	}
	// Closing ends the receiver's copy once it has read everything sent.
	_ = c.Close()
	res := <-received
	took := time.Since(start)
	if sendErr != nil {
		return 0, 0, fmt.Errorf("loopback send: %w", sendErr)
	}
	if res.err != nil {
		return 0, 0, fmt.Errorf("loopback receive: %w", res.err)
	}
	return res.bytes, took, nil
}

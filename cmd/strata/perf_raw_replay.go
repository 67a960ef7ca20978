package main

// The hot path of `strata perf raw-produce` and `raw-fetch`: one framed
// request replayed over raw TCP connections, a writer and a reader
// goroutine per connection, responses read by their length prefix only.
// Every checkEvery-th response of a connection (its first and its last
// too) is decoded by the command's check function; the others are only
// counted.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// maxRawResponseBytes bounds a response's length prefix, so a corrupt
// stream fails instead of allocating gigabytes.
const maxRawResponseBytes = 1 << 30

// rawConn is one connection and the request it replays.
type rawConn struct {
	conn    net.Conn
	request []byte
	// unitsPerResponse is what one successful response counts for
	// (records for raw-produce).
	unitsPerResponse int64
	// bytesPerResponse is the payload one successful response counts
	// for in MB/s; 0 to count the response's own size (raw-fetch).
	bytesPerResponse int64
	// check decodes one response (without its length prefix) and
	// returns an error for any error code in it.
	check func(resp []byte) error
}

// rawCounts are the totals or one window of a replay.
type rawCounts struct {
	responses int64
	units     int64
	bytes     int64
	latency   *hdrhistogram.Histogram // microseconds
}

func newRawCounts() rawCounts { return rawCounts{latency: newLatencyHistogram()} }

// rawReplay replays its connections' requests until the context ends,
// then waits for the responses still in flight.
type rawReplay struct {
	conns      []rawConn
	inFlight   int
	timeout    time.Duration // bound on each write and each response
	checkEvery int64
	// maxBytes, if > 0, ends the replay once requests counting this many
	// bytes (bytesPerResponse each) were sent; bytesLeft is what is left.
	maxBytes  int64
	bytesLeft atomic.Int64

	stop     chan struct{}
	stopOnce sync.Once
	mu       struct {
		sync.Mutex
		total    rawCounts
		window   rawCounts
		firstErr error
	}
}

func (r *rawReplay) halt() { r.stopOnce.Do(func() { close(r.stop) }) }

// fail records the first error and ends the replay at once: the
// connections are closed so that no reader waits for a response.
func (r *rawReplay) fail(err error) {
	r.mu.Lock()
	if r.mu.firstErr == nil {
		r.mu.firstErr = err
	}
	r.mu.Unlock()
	r.halt()
	for _, c := range r.conns {
		_ = c.conn.Close()
	}
}

// run replays until ctx ends (or a failure) and returns the totals;
// report, if set, is called every interval with the window's counts.
func (r *rawReplay) run(ctx context.Context, interval time.Duration, report func(window rawCounts, elapsed time.Duration)) (rawCounts, time.Duration, error) {
	r.stop = make(chan struct{})
	r.bytesLeft.Store(r.maxBytes)
	r.mu.total, r.mu.window = newRawCounts(), newRawCounts()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range r.conns {
		// The reader holds the send time of the response it awaits, the
		// channel the others: inFlight requests outstanding at most.
		sent := make(chan time.Time, r.inFlight-1)
		wg.Add(2)
		go func() { defer wg.Done(); r.write(r.conns[i], sent) }()
		go func() { defer wg.Done(); r.read(r.conns[i], sent) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	windowStart := start
	ctxDone := ctx.Done()
	for waiting := true; waiting; {
		select {
		case <-ctxDone:
			r.halt()
			ctxDone = nil // the responses in flight are still to come
		case now := <-ticker.C:
			r.mu.Lock()
			window := r.mu.window
			r.mu.window = newRawCounts()
			r.mu.Unlock()
			if report != nil {
				report(window, now.Sub(windowStart))
			}
			windowStart = now
		case <-done:
			waiting = false
		}
	}
	elapsed := time.Since(start)
	for _, c := range r.conns {
		_ = c.conn.Close()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.total, elapsed, r.mu.firstErr
}

// write sends the request whenever fewer than inFlight are outstanding,
// until the replay stops or the byte budget is spent; closing sent tells
// the reader no more come.
func (r *rawReplay) write(c rawConn, sent chan<- time.Time) {
	defer close(sent)
	for {
		if r.maxBytes > 0 && r.bytesLeft.Add(-c.bytesPerResponse)+c.bytesPerResponse <= 0 {
			return
		}
		select {
		case <-r.stop:
			return
		case sent <- time.Now():
		}
		_ = c.conn.SetWriteDeadline(time.Now().Add(r.timeout))
		if _, err := c.conn.Write(c.request); err != nil {
			r.fail(fmt.Errorf("send to %s: %w", c.conn.RemoteAddr(), err))
			return
		}
	}
}

// read reads one response per send, by length prefix, and counts it.
func (r *rawReplay) read(c rawConn, sent <-chan time.Time) {
	var (
		prefix  [4]byte
		buf     []byte
		read    int64
		checked int64 // responses checked, so the last one is checked once
	)
	for sentAt := range sent {
		_ = c.conn.SetReadDeadline(time.Now().Add(r.timeout))
		if _, err := io.ReadFull(c.conn, prefix[:]); err != nil {
			r.failRead(c, err)
			return
		}
		n := binary.BigEndian.Uint32(prefix[:])
		if n < 4 || n > maxRawResponseBytes {
			r.fail(fmt.Errorf("response from %s claims %d bytes", c.conn.RemoteAddr(), n))
			return
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(c.conn, buf); err != nil {
			r.failRead(c, err)
			return
		}
		latency := time.Since(sentAt)
		if read%r.checkEvery == 0 {
			if err := c.check(buf); err != nil {
				r.fail(err)
				return
			}
			checked = read + 1
		}
		read++
		r.count(c, int64(n)+4, latency)
	}
	if read > checked {
		if err := c.check(buf); err != nil {
			r.fail(fmt.Errorf("last response: %w", err))
		}
	}
}

// failRead reports a read error, unless the replay already failed (then
// the connection was closed on purpose).
func (r *rawReplay) failRead(c rawConn, err error) {
	select {
	case <-r.stop:
		r.mu.Lock()
		failed := r.mu.firstErr != nil
		r.mu.Unlock()
		if failed {
			return
		}
	default:
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("the broker closed the connection (see its log for why)")
	}
	r.fail(fmt.Errorf("read from %s: %w", c.conn.RemoteAddr(), err))
}

func (r *rawReplay) count(c rawConn, responseBytes int64, latency time.Duration) {
	bytes := c.bytesPerResponse
	if bytes == 0 {
		bytes = responseBytes
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range []*rawCounts{&r.mu.total, &r.mu.window} {
		w.responses++
		w.units += c.unitsPerResponse
		w.bytes += bytes
		recordMicros(w.latency, latency)
	}
}

package main

import (
	"context"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// decodeFramedRequest checks a framed request's length prefix and header
// and returns its body.
func decodeFramedRequest(t *testing.T, framed []byte, key, version int16, flexible bool) []byte {
	t.Helper()
	r := kbin.Reader{Src: framed}
	if n := r.Int32(); int(n) != len(framed)-4 {
		t.Fatalf("length prefix %d, request has %d bytes after it", n, len(framed)-4)
	}
	if k, v := r.Int16(), r.Int16(); k != key || v != version {
		t.Fatalf("header says key %d v%d, want key %d v%d", k, v, key, version)
	}
	r.Int32() // correlation id
	if id := r.NullableString(); id == nil || *id != rawClientID {
		t.Fatalf("client id %v, want %q", id, rawClientID)
	}
	if flexible {
		kmsg.SkipTags(&r)
	}
	if !r.Ok() {
		t.Fatal("request header is truncated")
	}
	return r.Src
}

// decodeBatch decodes one record batch, checks its length and CRC and
// returns it with the values of its (uncompressed) records.
func decodeBatch(t *testing.T, b []byte) (kmsg.RecordBatch, [][]byte) {
	t.Helper()
	var batch kmsg.RecordBatch
	if err := batch.ReadFrom(b); err != nil {
		t.Fatalf("decode batch: %v", err)
	}
	if int(batch.Length) != len(b)-12 {
		t.Errorf("batch length %d, want %d", batch.Length, len(b)-12)
	}
	if got := crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)); int32(got) != batch.CRC {
		t.Errorf("batch CRC %08x, computed %08x", uint32(batch.CRC), got)
	}
	if batch.Attributes&7 != 0 {
		return batch, nil
	}
	var values [][]byte
	r := kbin.Reader{Src: batch.Records}
	for len(r.Src) > 0 && r.Ok() {
		length := r.Varint()
		span := r.Span(int(length))
		var rec kmsg.Record
		if err := rec.ReadFrom(append(kbin.AppendVarint(nil, length), span...)); err != nil {
			t.Fatalf("decode record %d: %v", len(values), err)
		}
		if int(rec.OffsetDelta) != len(values) {
			t.Errorf("record %d has offset delta %d", len(values), rec.OffsetDelta)
		}
		values = append(values, rec.Value)
	}
	if !r.Ok() {
		t.Fatal("records are truncated")
	}
	return batch, values
}

func TestRawProduceRequestBuilder(t *testing.T) {
	for _, tc := range []struct {
		name        string
		version     int16
		compression string
		wantCodec   int16
	}{
		{"v12 uncompressed", 12, "none", 0},
		{"v9 uncompressed", 9, "none", 0},
		{"v3 uncompressed", 3, "none", 0},
		{"v12 gzip", 12, "gzip", 1},
		{"v12 zstd", 12, "zstd", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			codec, err := rawCompressor(tc.compression)
			if err != nil {
				t.Fatal(err)
			}
			batch, err := buildRecordBatch(rawBatchSpec{recordSize: 100, records: 7, codec: codec},
				rand.New(rand.NewPCG(1, 2)), time.UnixMilli(1_700_000_000_000))
			if err != nil {
				t.Fatal(err)
			}
			framed := buildProduceRequest(tc.version, -1, 3*time.Second, "orders", []int32{0, 2, 3}, batch)
			body := decodeFramedRequest(t, framed, kmsg.Produce.Int16(), tc.version, tc.version >= 9)
			req := kmsg.NewPtrProduceRequest()
			req.Version = tc.version
			if err := req.ReadFrom(body); err != nil {
				t.Fatalf("decode produce request: %v", err)
			}
			if req.Acks != -1 || req.TimeoutMillis != 3000 || req.TransactionID != nil {
				t.Errorf("acks %d, timeout %d, transactional id %v", req.Acks, req.TimeoutMillis, req.TransactionID)
			}
			if len(req.Topics) != 1 || req.Topics[0].Topic != "orders" {
				t.Fatalf("topics %+v, want orders only", req.Topics)
			}
			var partitions []int32
			for _, p := range req.Topics[0].Partitions {
				partitions = append(partitions, p.Partition)
				b, values := decodeBatch(t, p.Records)
				if b.NumRecords != 7 || b.LastOffsetDelta != 6 || b.Magic != 2 {
					t.Errorf("partition %d: %d records, last offset delta %d, magic %d", p.Partition, b.NumRecords, b.LastOffsetDelta, b.Magic)
				}
				if b.ProducerID != -1 || b.FirstSequence != -1 {
					t.Errorf("partition %d: producer id %d, sequence %d: want a non-idempotent batch", p.Partition, b.ProducerID, b.FirstSequence)
				}
				if b.Attributes&7 != tc.wantCodec {
					t.Errorf("partition %d: codec %d, want %d", p.Partition, b.Attributes&7, tc.wantCodec)
				}
				if tc.wantCodec == 0 {
					if len(values) != 7 || len(values[0]) != 100 || slices.Equal(values[0], values[1]) {
						t.Errorf("partition %d: %d values, want 7 different values of 100 bytes", p.Partition, len(values))
					}
				}
			}
			if !slices.Equal(partitions, []int32{0, 2, 3}) {
				t.Errorf("partitions %v, want [0 2 3]", partitions)
			}
		})
	}
}

func TestRawFetchRequestBuilder(t *testing.T) {
	from := []rawFetchPartition{{partition: 0, startOffset: 5}, {partition: 1, startOffset: 0}}
	framed := buildFetchRequest(12, "orders", from, 50<<20, 1<<20)
	body := decodeFramedRequest(t, framed, kmsg.Fetch.Int16(), 12, true)
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	if err := req.ReadFrom(body); err != nil {
		t.Fatalf("decode fetch request: %v", err)
	}
	if req.SessionID != 0 || req.SessionEpoch != -1 || req.MaxWaitMillis != 0 || req.MinBytes != 1 || req.MaxBytes != 50<<20 || req.ReplicaID != -1 {
		t.Errorf("session %d/%d, wait %d, min %d, max %d, replica %d: want a full fetch that does not wait",
			req.SessionID, req.SessionEpoch, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.ReplicaID)
	}
	if len(req.Topics) != 1 || req.Topics[0].Topic != "orders" || len(req.Topics[0].Partitions) != 2 {
		t.Fatalf("topics %+v, want orders with two partitions", req.Topics)
	}
	for i, p := range req.Topics[0].Partitions {
		if p.Partition != from[i].partition || p.FetchOffset != from[i].startOffset || p.PartitionMaxBytes != 1<<20 {
			t.Errorf("partition %d: %+v", i, p)
		}
	}
}

func TestRawLeadersForConnection(t *testing.T) {
	l := rawLeaders{addrs: []string{"a:1", "b:1"}, partitions: map[string][]int32{"a:1": {0, 2, 4}, "b:1": {1, 3}}}
	for _, tc := range []struct {
		conn, perRequest int
		wantAddr         string
		want             []int32
	}{
		{0, 0, "a:1", []int32{0, 2, 4}},
		{1, 0, "b:1", []int32{1, 3}},
		{0, 2, "a:1", []int32{0, 2}},
		{2, 2, "a:1", []int32{4, 0}},
		{3, 1, "b:1", []int32{3}},
		{1, 5, "b:1", []int32{1, 3}},
	} {
		addr, got := l.forConnection(tc.conn, tc.perRequest)
		if addr != tc.wantAddr || !slices.Equal(got, tc.want) {
			t.Errorf("forConnection(%d, %d) = %s %v, want %s %v", tc.conn, tc.perRequest, addr, got, tc.wantAddr, tc.want)
		}
	}
}

func TestRawByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "50MiB": 50 << 20, "1GiB": 1 << 30, "8KiB": 8 << 10, "3B": 3} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MiB", "1MB", "MiB", "2TiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, b)
		}
	}
}

// topicEndOffsetSum is the sum of topic's partitions' end offsets.
func topicEndOffsetSum(t *testing.T, addr, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	return sum
}

var (
	rawProduceTotal = regexp.MustCompile(`(?m)^raw-produce total: (\d+) records, .* \(([0-9.]+) MB/sec\), (\d+) responses,`)
	rawFetchTotal   = regexp.MustCompile(`(?m)^raw-fetch total: (\d+) responses, .* \(([0-9.]+) MB/sec\), latency p50 [0-9.]+ ms, p99 [0-9.]+ ms\.$`)
)

func TestRawProduceThenRawFetch(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "raw", "--partitions", "3")
	cli(t, addr, "", "perf", "produce", "--topic", "raw", "--num-records", "10", "--record-size", "10",
		"--throughput", "-1") // records before raw-produce's, so the count is of growth
	before := topicEndOffsetSum(t, addr, "raw")

	out := cli(t, addr, "", "perf", "raw-produce", "--topic", "raw", "--record-size", "200", "--records-per-batch", "8",
		"--connections", "2", "--in-flight", "4", "--duration", "2s", "--check-every", "10")
	m := rawProduceTotal.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total line in:\n%s", out)
	}
	acked, _ := strconv.ParseInt(m[1], 10, 64)
	responses, _ := strconv.ParseInt(m[3], 10, 64)
	if acked <= 0 || acked%8 != 0 || responses <= 0 {
		t.Fatalf("raw-produce acknowledged %d records in %d responses:\n%s", acked, responses, out)
	}
	if grew := topicEndOffsetSum(t, addr, "raw") - before; grew != acked {
		t.Errorf("end offsets grew by %d, raw-produce reports %d records acknowledged", grew, acked)
	}

	res := runCLI(t, time.Minute, "", "-b", addr, "--timeout", "10s",
		"perf", "raw-fetch", "--topic", "raw", "--connections", "2", "--in-flight", "2", "--duration", "1s")
	if res.err != nil {
		t.Fatalf("raw-fetch: %v\nstderr: %s", res.err, res.stderr)
	}
	m = rawFetchTotal.FindStringSubmatch(res.stdout)
	if m == nil {
		t.Fatalf("no total line in:\n%s", res.stdout)
	}
	if mb, _ := strconv.ParseFloat(m[2], 64); mb <= 0 {
		t.Errorf("raw-fetch MB/sec %s, want more than 0:\n%s", m[2], res.stdout)
	}
	if strings.Contains(strings.ToLower(res.stdout+res.stderr), "error") {
		t.Errorf("raw-fetch reports an error:\n%s%s", res.stdout, res.stderr)
	}
}

// TestRawProduceStopsAtBytes: --bytes ends the run once that many record
// bytes went out, long before --duration, and every byte sent is
// acknowledged and in the log (at most one request of each connection past
// the budget).
func TestRawProduceStopsAtBytes(t *testing.T) {
	addr := startBroker(t, nil)
	start := time.Now()
	out := cli(t, addr, "", "perf", "raw-produce", "--topic", "rawbytes", "--partitions", "2", "--record-size", "100",
		"--records-per-batch", "10", "--connections", "2", "--in-flight", "3", "--bytes", "1MiB", "--duration", "5m")
	if took := time.Since(start); took > 2*time.Minute {
		t.Fatalf("raw-produce --bytes 1MiB ran %s", took)
	}
	m := rawProduceTotal.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total line in:\n%s", out)
	}
	acked, _ := strconv.ParseInt(m[1], 10, 64)
	// 2 partitions x 10 records x 100 B per request: 1 MiB is 524.288
	// requests, so 525 and up to one more per connection.
	if requests := acked / 20; requests < 525 || requests > 527 {
		t.Fatalf("acknowledged %d records (%d requests), want 525-527 requests:\n%s", acked, requests, out)
	}
	if got := topicEndOffsetSum(t, addr, "rawbytes"); got != acked {
		t.Errorf("end offsets sum to %d, raw-produce reports %d records acknowledged", got, acked)
	}
	res := runCLI(t, time.Minute, "", "-b", addr, "perf", "raw-produce", "--topic", "rawbytes", "--bytes", "-1")
	if res.err == nil || !strings.Contains(res.err.Error(), "--bytes") {
		t.Errorf("--bytes -1: err %v, want a --bytes error", res.err)
	}
}

func TestRawFetchEmptyTopicFails(t *testing.T) {
	addr := startBroker(t, nil)
	cli(t, addr, "", "topic", "create", "empty", "--partitions", "2")
	res := runCLI(t, time.Minute, "", "-b", addr, "--timeout", "10s", "perf", "raw-fetch", "--topic", "empty", "--duration", "1s")
	if res.err == nil {
		t.Fatalf("raw-fetch of an empty topic succeeded:\n%s", res.stdout)
	}
	if msg := res.err.Error(); !strings.Contains(msg, `topic "empty" holds no records`) || strings.Contains(msg, "\n") {
		t.Errorf("error %q, want one line saying the topic is empty", msg)
	}
	if res.stdout != "" {
		t.Errorf("stdout %q, want nothing", res.stdout)
	}
}

func TestRawProduceRefusedByBroker(t *testing.T) {
	addr := startBroker(t, nil)
	for _, tc := range []struct {
		name, topic, acks, want string
	}{
		{"invalid acks", "raw", "5", "INVALID_REQUIRED_ACKS"},
		{"invalid topic name", "bad name!", "1", "INVALID_TOPIC_EXCEPTION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res := runCLI(t, 30*time.Second, "", "-b", addr, "--timeout", "10s",
				"perf", "raw-produce", "--topic", tc.topic, "--acks", tc.acks, "--duration", "20s")
			if res.err == nil {
				t.Fatalf("raw-produce succeeded:\n%s", res.stdout)
			}
			if !strings.Contains(res.err.Error(), tc.want) {
				t.Errorf("error %q does not name %s", res.err, tc.want)
			}
			// The run is 20 s long; a refusal must end it at once.
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s to fail", took)
			}
		})
	}
}

func TestPerfBaselinePrintsThreeFigures(t *testing.T) {
	res := runCLI(t, time.Minute, "", "perf", "baseline", "--dir", t.TempDir(), "--size", "8MiB", "--duration", "200ms")
	if res.err != nil {
		t.Fatalf("baseline: %v\nstderr: %s", res.err, res.stderr)
	}
	for _, name := range []string{"disk write (fdatasync)", "page cache read", "loopback TCP"} {
		m := regexp.MustCompile(`(?m)^baseline ` + regexp.QuoteMeta(name) + `: (\d+) bytes in [0-9.]+ s, ([0-9.]+) MB/sec$`).
			FindStringSubmatch(res.stdout)
		if m == nil {
			t.Errorf("no %q line in:\n%s", name, res.stdout)
			continue
		}
		if mb, _ := strconv.ParseFloat(m[2], 64); mb <= 0 || m[1] == "0" {
			t.Errorf("%s: %s bytes, %s MB/sec; want positive figures", name, m[1], m[2])
		}
	}
	if name := "disk write (fdatasync)"; !strings.Contains(res.stdout, "baseline "+name+": 8388608 bytes") {
		t.Errorf("the disk write did not write --size bytes:\n%s", res.stdout)
	}
}

func TestRawRefusesSecuredListeners(t *testing.T) {
	config := t.TempDir() + "/client.properties"
	if err := os.WriteFile(config, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"raw-produce", "raw-fetch"} {
		res := runCLI(t, 30*time.Second, "", "-b", "127.0.0.1:1", "--command-config", config, "perf", sub, "--topic", "x")
		if res.err == nil || !strings.Contains(res.err.Error(), "security.protocol=SASL_PLAINTEXT") ||
			!strings.Contains(res.err.Error(), "neither TLS nor SASL") {
			t.Errorf("%s with SASL: error %v, want a refusal naming the protocol", sub, res.err)
		}
	}
}

// TestRawReplayKeepsInFlightBound runs the replay against a loopback
// server that holds its answers back: the client must stop at --in-flight
// outstanding requests, and count every response it then gets.
func TestRawReplayKeepsInFlightBound(t *testing.T) {
	const inFlight = 3
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	request := []byte{0, 0, 0, 4, 1, 2, 3, 4}
	response := []byte{0, 0, 0, 4, 0, 0, 0, 1}
	type serverResult struct {
		heldBack, extra int // requests before the first answer; any beyond inFlight
		answered        int
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan serverResult, 1)
	go func() {
		var res serverResult
		defer func() { served <- res }()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, len(request))
		for res.heldBack < inFlight {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			res.heldBack++
		}
		// A client that keeps its bound sends nothing more until answered;
		// this is the one wait that cannot be for a condition.
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := io.ReadFull(c, buf); err == nil {
			res.extra++
		}
		cancel()
		_ = c.SetReadDeadline(time.Time{})
		for range res.heldBack + res.extra {
			if _, err := c.Write(response); err != nil {
				return
			}
			res.answered++
		}
		// Answer whatever was sent before the replay saw the cancel.
		for {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			if _, err := c.Write(response); err != nil {
				return
			}
			res.answered++
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	replay := &rawReplay{
		conns:    []rawConn{{conn: conn, request: request, unitsPerResponse: 2, check: func([]byte) error { return nil }}},
		inFlight: inFlight, timeout: 10 * time.Second, checkEvery: 1,
	}
	total, _, err := replay.run(ctx, time.Hour, nil)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	res := <-served
	if res.heldBack != inFlight || res.extra != 0 {
		t.Errorf("the client had %d requests outstanding, want %d", res.heldBack+res.extra, inFlight)
	}
	if total.responses != int64(res.answered) || total.units != 2*int64(res.answered) {
		t.Errorf("counted %d responses (%d units), the server answered %d", total.responses, total.units, res.answered)
	}
}

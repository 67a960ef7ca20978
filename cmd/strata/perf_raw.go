package main

// strata perf raw-produce|raw-fetch: load generators that cost the client
// next to nothing, so that what they report is the broker's speed. Each
// builds its request once (perf_raw_request.go) and replays the same bytes
// over raw TCP connections (perf_raw_replay.go).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/properties"
)

const (
	// rawReportInterval is how often raw-produce and raw-fetch print a window.
	rawReportInterval = 5 * time.Second
	// rawDefaultCheckEvery is how often (in responses per connection) a
	// response is decoded to look for error codes.
	rawDefaultCheckEvery = 100
)

// rawCommonOptions are the flags raw-produce and raw-fetch share.
type rawCommonOptions struct {
	bootstrapServer string
	topic           string
	connections     int
	inFlight        int
	duration        time.Duration
	checkEvery      int64
}

func (o *rawCommonOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.bootstrapServer, "bootstrap-server", "", "brokers to connect to (overrides --brokers)")
	f.StringVar(&o.topic, "topic", "", "topic (required)")
	f.IntVar(&o.connections, "connections", 1, "TCP connections, each replaying its own copy of the request")
	f.IntVar(&o.inFlight, "in-flight", 4, "requests in flight per connection")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "how long to send")
	f.Int64Var(&o.checkEvery, "check-every", rawDefaultCheckEvery,
		"decode every n-th response of a connection (and its first and last) to look for error codes")
	_ = cmd.MarkFlagRequired("topic")
}

func (o rawCommonOptions) validate() error {
	switch {
	case o.topic == "":
		return errors.New("--topic is required")
	case o.connections <= 0:
		return errors.New("--connections must be positive")
	case o.inFlight <= 0:
		return errors.New("--in-flight must be positive")
	case o.duration <= 0:
		return errors.New("--duration must be positive")
	case o.checkEvery <= 0:
		return errors.New("--check-every must be positive")
	}
	return nil
}

// rawConnSettings are the shared connection settings with
// --bootstrap-server applied. Raw connections speak plaintext Kafka only,
// so a --command-config asking for TLS or SASL is refused rather than
// half applied.
func rawConnSettings(cmd *cobra.Command, o rawCommonOptions) (connSettings, error) {
	conn := connSettingsOf(cmd)
	if o.bootstrapServer != "" {
		conn.brokers = seedBrokers(o.bootstrapServer)
	}
	if conn.commandConfig != "" {
		props, err := properties.Read(conn.commandConfig)
		if err != nil {
			return conn, fmt.Errorf("--command-config: %w", err)
		}
		if p := strings.ToUpper(strings.TrimSpace(props["security.protocol"])); p != "" && p != "PLAINTEXT" {
			return conn, fmt.Errorf("--command-config: security.protocol=%s: %s opens plain TCP connections "+
				"and speaks neither TLS nor SASL; use strata perf produce/consume for secured listeners", p, cmd.Name())
		}
	}
	return conn, nil
}

// openRawAdmin is openAdmin for raw-produce and raw-fetch: their
// connection settings, an admin client and a context bounding the setup
// (which the replay does not use); done closes both.
func openRawAdmin(cmd *cobra.Command, o rawCommonOptions) (connSettings, *kadm.Client, context.Context, func(), error) {
	conn, err := rawConnSettings(cmd, o)
	if err != nil {
		return conn, nil, nil, nil, err
	}
	adm, err := conn.newAdmin(cmd)
	if err != nil {
		return conn, nil, nil, nil, err
	}
	ctx, cancel := conn.requestContext(cmd)
	return conn, adm, ctx, func() { cancel(); adm.Close() }, nil
}

// rawLeaders is a topic's partitions grouped by their leader's address.
type rawLeaders struct {
	addrs      []string           // sorted
	partitions map[string][]int32 // by address, sorted
}

// topicLeaders reads the topic's metadata: its partitions by leader.
func topicLeaders(ctx context.Context, adm *kadm.Client, topic string) (rawLeaders, error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return rawLeaders{}, fmt.Errorf("metadata: %w", err)
	}
	td, ok := md.Topics[topic]
	if !ok {
		return rawLeaders{}, topicError(topic, kerr.UnknownTopicOrPartition, "")
	}
	if td.Err != nil {
		return rawLeaders{}, topicError(topic, td.Err, "")
	}
	brokers := map[int32]kadm.BrokerDetail{}
	for _, b := range md.Brokers {
		brokers[b.NodeID] = b
	}
	leaders := rawLeaders{partitions: map[string][]int32{}}
	for _, p := range td.Partitions.Sorted() {
		if p.Err != nil {
			return rawLeaders{}, fmt.Errorf("partition %d: %w", p.Partition, topicError(topic, p.Err, ""))
		}
		b, ok := brokers[p.Leader]
		if !ok {
			return rawLeaders{}, fmt.Errorf("topic %q partition %d: leader %d is not among the brokers", topic, p.Partition, p.Leader)
		}
		addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		leaders.partitions[addr] = append(leaders.partitions[addr], p.Partition)
	}
	for addr := range leaders.partitions {
		leaders.addrs = append(leaders.addrs, addr)
	}
	slices.Sort(leaders.addrs)
	if len(leaders.addrs) == 0 {
		return rawLeaders{}, fmt.Errorf("topic %q has no partitions", topic)
	}
	return leaders, nil
}

// forConnection is connection i's leader and partitions: connections go
// round robin over the leaders, and each takes the next perRequest
// partitions of its leader (all of them when perRequest is 0 or more than
// the leader has).
func (l rawLeaders) forConnection(i, perRequest int) (string, []int32) {
	addr := l.addrs[i%len(l.addrs)]
	all := l.partitions[addr]
	if perRequest <= 0 || perRequest >= len(all) {
		return addr, all
	}
	first := (i / len(l.addrs)) * perRequest
	out := make([]int32, perRequest)
	for j := range out {
		out[j] = all[(first+j)%len(all)]
	}
	return addr, out
}

// negotiateVersion is the newest version of apiKey that every broker and
// raw-* support, at least minVersion.
func negotiateVersion(ctx context.Context, adm *kadm.Client, apiKey, minVersion, maxVersion int16) (int16, error) {
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		return 0, fmt.Errorf("api versions: %w", err)
	}
	version := maxVersion
	for _, bv := range versions.Sorted() {
		if bv.Err != nil {
			return 0, fmt.Errorf("api versions of broker %d: %w", bv.NodeID, bv.Err)
		}
		brokerMax, ok := bv.KeyMaxVersion(apiKey)
		if !ok {
			return 0, fmt.Errorf("broker %d does not support %s", bv.NodeID, kmsg.NameForKey(apiKey))
		}
		version = min(version, brokerMax)
	}
	if version < minVersion {
		return 0, fmt.Errorf("the brokers support %s up to v%d; raw requests need v%d or newer",
			kmsg.NameForKey(apiKey), version, minVersion)
	}
	return version, nil
}

// dialRaw opens a plain TCP connection to addr within the dial bound.
func dialRaw(ctx context.Context, conn connSettings, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: min(conn.timeout, maxDialTimeout)}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	return c, nil
}

// rawWindowLine is the line printed every rawReportInterval and, with
// what "... total", at the end:
//
//	raw-produce: N records, X records/sec (Y MB/sec), R responses, Z responses/sec, latency p50 A ms, p99 B ms.
//	raw-fetch: R responses, Z responses/sec (Y MB/sec), latency p50 A ms, p99 B ms.
func rawWindowLine(what, unit string, c rawCounts, elapsed time.Duration) string {
	secs := max(elapsed.Seconds(), 1e-9)
	responses := ""
	if unit != "responses" {
		responses = fmt.Sprintf(" %d responses, %s responses/sec,", c.responses, javaFixed(float64(c.responses)/secs, 1))
	}
	return fmt.Sprintf("%s: %d %s, %s %s/sec (%s MB/sec),%s latency p50 %s ms, p99 %s ms.",
		what, c.units, unit,
		javaFixed(float64(c.units)/secs, 1), unit,
		javaFixed(float64(c.bytes)/secs/bytesPerMB, 2),
		responses,
		javaFixed(float64(c.latency.ValueAtQuantile(50))/1000, 2),
		javaFixed(float64(c.latency.ValueAtQuantile(99))/1000, 2))
}

// replayAndReport runs replay for opts.duration (or until Ctrl-C),
// printing a window line every rawReportInterval and the total at the end.
func replayAndReport(cmd *cobra.Command, replay *rawReplay, opts rawCommonOptions, what, unit string) error {
	out := cmd.OutOrStdout()
	sigCtx, stop := signal.NotifyContext(commandContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(sigCtx, opts.duration)
	defer cancel()
	total, elapsed, err := replay.run(ctx, rawReportInterval, func(w rawCounts, d time.Duration) {
		fmt.Fprintln(out, rawWindowLine(what, unit, w, d))
	})
	fmt.Fprintln(out, rawWindowLine(what+" total", unit, total, elapsed))
	if err != nil {
		return err
	}
	if sigCtx.Err() != nil {
		return errors.New("interrupted")
	}
	return nil
}

// openRawConns dials one connection per request.
func openRawConns(ctx context.Context, conn connSettings, addrs []string, build func(i int) rawConn) ([]rawConn, error) {
	conns := make([]rawConn, 0, len(addrs))
	for i, addr := range addrs {
		c, err := dialRaw(ctx, conn, addr)
		if err != nil {
			for _, open := range conns {
				_ = open.conn.Close()
			}
			return nil, err
		}
		rc := build(i)
		rc.conn = c
		conns = append(conns, rc)
	}
	return conns, nil
}

// perfRawProduceOptions are raw-produce's flags.
type perfRawProduceOptions struct {
	rawCommonOptions
	recordSize           int
	recordsPerBatch      int
	partitionsPerRequest int
	acks                 string
	compression          string
	partitions           int32
	maxBytes             byteSize
}

func newPerfRawProduceCmd() *cobra.Command {
	var opts perfRawProduceOptions
	cmd := &cobra.Command{
		Use:   "raw-produce --topic T [--record-size 1024] [--records-per-batch 16] [--connections C] [--in-flight K] [--duration 10s]",
		Short: "Replay one pre-built Produce request over raw connections: the broker's produce speed",
		Long: `Measure how fast the broker takes produce requests, with a client that costs
next to nothing: one Produce request per connection is built once (one
record batch of --records-per-batch random, incompressible records per
partition, CRC computed once, not idempotent so the same batch may be sent
again; the broker assigns new offsets), framed once, and the same bytes are
sent over and over, --in-flight at a time per connection. Responses are read
by their length prefix; the first, every --check-every-th and the last
response of each connection are decoded, and any error code stops the run.

Counts only acknowledged records (records per request x responses); MB/sec
counts record values (MB = 1024*1024 bytes), latency is send to response.
A line every 5 seconds and a total at the end. With --bytes the run ends
once that many record bytes were sent and their responses came (or at
--duration, whichever is first): to compare with a disk write of the same
size, since past a few GB the kernel's dirty-page limits, not the broker,
set the pace of a longer run.

Creates the topic with --partitions partitions if it does not exist.
Connections go round robin over the partitions' leaders; with
--partitions-per-request N each request covers N of its leader's
partitions (0: all). Plaintext only: TLS and SASL listeners are refused.`,
		Example: `  strata perf raw-produce --bootstrap-server 127.0.0.1:9092 --topic raw --connections 2 --in-flight 8 --duration 10s`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPerfRawProduce(cmd, opts)
		},
	}
	opts.addFlags(cmd)
	f := cmd.Flags()
	f.IntVar(&opts.recordSize, "record-size", 1024, "bytes of random value per record")
	f.IntVar(&opts.recordsPerBatch, "records-per-batch", 16, "records in each partition's batch")
	f.IntVar(&opts.partitionsPerRequest, "partitions-per-request", 0, "partitions each request writes to (0: all of its leader's)")
	f.StringVar(&opts.acks, "acks", "1", "acks: 1, all (-1); 0 is refused (no response to time)")
	f.StringVar(&opts.compression, "compression", "none", "batch compression: none, gzip, snappy, lz4, zstd")
	f.Int32Var(&opts.partitions, "partitions", 4, "partitions of the topic if raw-produce creates it")
	f.Var(&opts.maxBytes, "bytes", "stop after sending this many record bytes (bytes or KiB, MiB, GiB; 0: until --duration)")
	return cmd
}

// parseRawAcks reads --acks. Anything but 0 goes to the broker as given,
// so that the broker's answer to a value it refuses can be seen.
func parseRawAcks(s string) (int16, error) {
	if s == "all" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("--acks %q: want 1 or all", s)
	}
	if n == 0 {
		return 0, errors.New("--acks 0: the broker sends no response, so nothing could be counted or timed; use 1 or all")
	}
	return int16(n), nil
}

// runPerfRawProduce runs raw-produce.
func runPerfRawProduce(cmd *cobra.Command, opts perfRawProduceOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	switch {
	case opts.recordSize < 0:
		return errors.New("--record-size must not be negative")
	case opts.recordsPerBatch <= 0:
		return errors.New("--records-per-batch must be positive")
	case opts.partitionsPerRequest < 0:
		return errors.New("--partitions-per-request must not be negative")
	case opts.partitions <= 0:
		return errors.New("--partitions must be positive")
	case opts.maxBytes < 0:
		return errors.New("--bytes must not be negative")
	}
	acks, err := parseRawAcks(opts.acks)
	if err != nil {
		return err
	}
	codec, err := rawCompressor(opts.compression)
	if err != nil {
		return err
	}
	conn, adm, ctx, done, err := openRawAdmin(cmd, opts.rawCommonOptions)
	if err != nil {
		return err
	}
	defer done()

	created, err := adm.CreateTopics(ctx, opts.partitions, -1, nil, opts.topic)
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	if res := created[opts.topic]; res.Err != nil && !errors.Is(res.Err, kerr.TopicAlreadyExists) {
		return topicError(opts.topic, res.Err, res.ErrMessage)
	}
	leaders, err := topicLeaders(ctx, adm, opts.topic)
	if err != nil {
		return err
	}
	version, err := negotiateVersion(ctx, adm, kmsg.Produce.Int16(), rawMinProduceVersion, rawMaxProduceVersion)
	if err != nil {
		return err
	}
	batch, err := buildRecordBatch(rawBatchSpec{recordSize: opts.recordSize, records: opts.recordsPerBatch, codec: codec},
		rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0)), time.Now())
	if err != nil {
		return err
	}

	addrs := make([]string, opts.connections)
	partitions := make([][]int32, opts.connections)
	for i := range addrs {
		addrs[i], partitions[i] = leaders.forConnection(i, opts.partitionsPerRequest)
	}
	conns, err := openRawConns(ctx, conn, addrs, func(i int) rawConn {
		return rawConn{
			request:          buildProduceRequest(version, acks, conn.timeout, opts.topic, partitions[i], batch),
			unitsPerResponse: int64(len(partitions[i]) * opts.recordsPerBatch),
			bytesPerResponse: int64(len(partitions[i]) * opts.recordsPerBatch * opts.recordSize),
			check: func(resp []byte) error {
				return checkProduceResponse(version, resp, len(partitions[i]))
			},
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "raw-produce: Produce v%d, acks %d, %d connection(s) x %d in flight, "+
		"%d records of %d B per partition batch, batch %d B, compression %s\n",
		version, acks, len(conns), opts.inFlight, opts.recordsPerBatch, opts.recordSize, len(batch), opts.compression)
	replay := &rawReplay{
		conns: conns, inFlight: opts.inFlight, timeout: conn.timeout, checkEvery: opts.checkEvery,
		maxBytes: int64(opts.maxBytes),
	}
	return replayAndReport(cmd, replay, opts.rawCommonOptions, "raw-produce", "records")
}

// perfRawFetchOptions are raw-fetch's flags.
type perfRawFetchOptions struct {
	rawCommonOptions
	fetchMaxBytes     byteSize
	partitionMaxBytes byteSize
}

func newPerfRawFetchCmd() *cobra.Command {
	opts := perfRawFetchOptions{fetchMaxBytes: 50 << 20, partitionMaxBytes: 1 << 20}
	cmd := &cobra.Command{
		Use:   "raw-fetch --topic T [--fetch-max-bytes 50MiB] [--partition-max-bytes 1MiB] [--connections C] [--in-flight K] [--duration 10s]",
		Short: "Replay one pre-built Fetch request over raw connections: the broker's speed serving cached data",
		Long: `Measure how fast the broker serves fetches, with a client that costs next
to nothing: the partitions' log start offsets are read once, one full Fetch
request (no fetch session, MaxWaitMillis 0, MinBytes 1) for all partitions
of the topic led by a connection's broker is built once, and the same bytes
are sent over and over, --in-flight at a time per connection. Every response
re-reads the same records, which after the first are in the page cache: this
measures serving cached data (sendfile included where the broker uses it),
not the disk.

Responses are counted by their length prefix (MB/sec counts whole responses,
MB = 1024*1024 bytes); the first one of each connection is decoded to check
that it has no error code and carries records, and so are every
--check-every-th and the last. The topic must hold records: fill it with
strata perf raw-produce or strata perf produce first. Plaintext only.`,
		Example: `  strata perf raw-fetch --bootstrap-server 127.0.0.1:9092 --topic raw --connections 2 --in-flight 4 --duration 10s`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPerfRawFetch(cmd, opts)
		},
	}
	opts.addFlags(cmd)
	f := cmd.Flags()
	f.Var(&opts.fetchMaxBytes, "fetch-max-bytes", "maximum bytes of one fetch response (bytes or KiB, MiB, GiB)")
	f.Var(&opts.partitionMaxBytes, "partition-max-bytes", "maximum bytes per partition in one response (bytes or KiB, MiB, GiB)")
	return cmd
}

// runPerfRawFetch runs raw-fetch.
func runPerfRawFetch(cmd *cobra.Command, opts perfRawFetchOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	if opts.fetchMaxBytes > maxRawResponseBytes || opts.partitionMaxBytes > maxRawResponseBytes {
		return fmt.Errorf("--fetch-max-bytes and --partition-max-bytes are at most %d", maxRawResponseBytes)
	}
	conn, adm, ctx, done, err := openRawAdmin(cmd, opts.rawCommonOptions)
	if err != nil {
		return err
	}
	defer done()

	leaders, err := topicLeaders(ctx, adm, opts.topic)
	if err != nil {
		return err
	}
	starts, err := adm.ListStartOffsets(ctx, opts.topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, opts.topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	var held int64
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok {
			held += o.Offset - s.Offset
		}
	})
	if held <= 0 {
		return fmt.Errorf("topic %q holds no records to fetch; fill it first (strata perf raw-produce or strata perf produce)", opts.topic)
	}
	version, err := negotiateVersion(ctx, adm, kmsg.Fetch.Int16(), rawMinFetchVersion, rawMaxFetchVersion)
	if err != nil {
		return err
	}

	addrs := make([]string, opts.connections)
	requests := make([][]byte, opts.connections)
	for i := range addrs {
		var partitions []int32
		addrs[i], partitions = leaders.forConnection(i, 0)
		from := make([]rawFetchPartition, len(partitions))
		for j, p := range partitions {
			s, _ := starts.Lookup(opts.topic, p)
			from[j] = rawFetchPartition{partition: p, startOffset: s.Offset}
		}
		requests[i] = buildFetchRequest(version, opts.topic, from, int32(opts.fetchMaxBytes), int32(opts.partitionMaxBytes))
	}
	conns, err := openRawConns(ctx, conn, addrs, func(i int) rawConn {
		return rawConn{
			request:          requests[i],
			unitsPerResponse: 1,
			check: func(resp []byte) error {
				n, err := checkFetchResponse(version, resp)
				if err == nil && n == 0 {
					err = fmt.Errorf("topic %q: a fetch from the log start offsets returned no records", opts.topic)
				}
				return err
			},
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "raw-fetch: Fetch v%d, %d connection(s) x %d in flight, %d records in the topic\n",
		version, len(conns), opts.inFlight, held)
	replay := &rawReplay{conns: conns, inFlight: opts.inFlight, timeout: conn.timeout, checkEvery: opts.checkEvery}
	return replayAndReport(cmd, replay, opts.rawCommonOptions, "raw-fetch", "responses")
}

// byteSize is a flag holding bytes, given as a number or with a KiB, MiB
// or GiB suffix.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }
func (b *byteSize) Type() string   { return "bytes" }

func (b *byteSize) Set(s string) error {
	units := []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}, {"", 0}}
	for _, u := range units {
		digits, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(digits), 10, 64)
		if err != nil || n <= 0 || n > (1<<40)>>u.shift {
			break
		}
		*b = byteSize(n << u.shift)
		return nil
	}
	return fmt.Errorf("want a positive size: bytes, or a number with KiB, MiB or GiB")
}

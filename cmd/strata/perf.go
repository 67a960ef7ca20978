package main

// strata perf produce|consume: load generators that accept the flags of
// Kafka's kafka-producer-perf-test and kafka-consumer-perf-test and print
// the same lines (see perf_stats.go for the formats).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() { rootCmd.AddCommand(newPerfCmd()) }

func newPerfCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "perf",
		Short: "Measure produce and consume throughput (kafka-*-perf-test compatible), run OMB workloads, load the broker with raw requests",
		Long: `Measure produce and consume throughput (kafka-*-perf-test compatible), run OMB
workloads, load the broker with raw requests.

The load generators collect garbage less often than a Go program does by
default (GOGC=` + strconv.Itoa(perfGCPercent) + ` unless the GOGC environment variable is set),
as OMB's Java workers run with large heaps: with Go's default a consumer's
collector runs a dozen times a second, takes one of the two cores of a
small machine while it marks, and its pauses show up as broker latency.`,
		PersistentPreRun: func(*cobra.Command, []string) { perfGCPolicy(os.Getenv) },
	}
	cmd.AddCommand(newPerfProduceCmd(), newPerfConsumeCmd(), newPerfOMBCmd(),
		newPerfRawProduceCmd(), newPerfRawFetchCmd(), newPerfBaselineCmd())
	return cmd
}

// perfGCPercent is the load generators' GOGC: their live heap is a few
// tens of MB (fetched batches, histograms), so a heap goal of 9x that is
// still small, and the collector runs a ninth as often.
const perfGCPercent = 800

// perfGCPolicy sets the load generators' GC percent unless the user chose
// one with GOGC. It returns the percent in force.
func perfGCPolicy(getenv func(string) string) int { return gcPolicy(getenv, perfGCPercent) }

// perfProduceOptions are kafka-producer-perf-test's flags.
type perfProduceOptions struct {
	topic            string
	numRecords       int64
	recordSize       int
	payloadFile      string
	payloadDelimiter string
	throughput       float64
	producerProps    []string
	producerConfig   string
}

func newPerfProduceCmd() *cobra.Command {
	var opts perfProduceOptions
	cmd := &cobra.Command{
		Use:   "produce --topic T --num-records N (--record-size S | --payload-file F) --throughput R [--producer-props k=v ...]",
		Short: "Produce N records as fast as allowed and report throughput and latency",
		Long: `Produce --num-records records to --topic and report throughput and latency
like kafka-producer-perf-test: a line every 5 seconds and a summary with
latency percentiles at the end (MB = 1024*1024 bytes; latency = time from
send to acknowledgement).

--producer-props takes Kafka producer properties, several after one flag as
in Kafka (--producer-props acks=1 linger.ms=5). Supported: bootstrap.servers
(overrides --brokers), acks, linger.ms, batch.size, compression.type,
max.in.flight.requests.per.connection, enable.idempotence, client.id,
request.timeout.ms, delivery.timeout.ms, retries; buffer.memory and the
serializers are accepted and ignored with a note.`,
		Example: `  strata perf produce --topic bench --num-records 1000000 --record-size 100 \
    --throughput -1 --producer-props acks=1 linger.ms=5 compression.type=lz4`,
		// Extra key=value arguments continue --producer-props (Kafka's
		// nargs("+")); anything else is an error.
		Args: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if !strings.Contains(a, "=") || !cmd.Flags().Changed("producer-props") {
					return fmt.Errorf("unexpected argument %q", a)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.producerProps = append(opts.producerProps, args...)
			return runPerfProduce(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.topic, "topic", "", "topic to produce to (required)")
	f.Int64Var(&opts.numRecords, "num-records", 0, "number of records to produce (required)")
	f.IntVar(&opts.recordSize, "record-size", 0, "record size in bytes (random uppercase letters)")
	f.StringVar(&opts.payloadFile, "payload-file", "", "file of payloads split by --payload-delimiter; each record picks one at random")
	f.StringVar(&opts.payloadDelimiter, "payload-delimiter", `\n`, "payload separator in --payload-file")
	f.Float64Var(&opts.throughput, "throughput", 0, "maximum records/sec, -1 for no limit (required)")
	f.StringArrayVar(&opts.producerProps, "producer-props", nil, "producer properties key=value (several may follow the flag)")
	f.StringVar(&opts.producerConfig, "producer.config", "", "producer properties file (--producer-props override it)")
	for _, name := range []string{"topic", "num-records", "throughput"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// payloadSource hands out record values: fresh random letters of a fixed
// size, or a random pick among the payloads of --payload-file.
type payloadSource struct {
	size     int
	payloads [][]byte
	rng      *rand.Rand
	fixed    []byte // the one generated payload when there is no payload file
}

func (p *payloadSource) next() []byte {
	if len(p.payloads) > 0 {
		return p.payloads[p.rng.IntN(len(p.payloads))]
	}
	// As kafka-producer-perf-test: one random payload, sent by every
	// record (kgo only reads it), so the generator costs nothing per record.
	if p.fixed == nil {
		p.fixed = make([]byte, p.size)
		fillRandomLetters(p.fixed, p.rng)
	}
	return p.fixed
}

// fillRandomLetters fills b with uniformly random 'A'..'Z', eight letters
// per 64-bit random draw (each multiply by 26 peels off one letter).
func fillRandomLetters(b []byte, rng *rand.Rand) {
	for i := 0; i < len(b); {
		x := rng.Uint64()
		for j := 0; j < 8 && i < len(b); j, i = j+1, i+1 {
			var hi uint64
			hi, x = bits.Mul64(x, 26)
			b[i] = 'A' + byte(hi)
		}
	}
}

// splitPayloads splits a payload file's content at delimiter, dropping
// empty payloads.
func splitPayloads(content []byte, delimiter string) [][]byte {
	var out [][]byte
	for _, p := range strings.Split(string(content), delimiter) {
		if p != "" {
			out = append(out, []byte(p))
		}
	}
	return out
}

// unescapeDelimiter turns the escapes Kafka users type (\n, \t, \r) into
// the characters.
func unescapeDelimiter(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\r`, "\r").Replace(s)
}

func (opts perfProduceOptions) validate() error {
	switch {
	case opts.topic == "":
		return errors.New("--topic is required")
	case opts.numRecords <= 0:
		return errors.New("--num-records should be greater than zero")
	case opts.recordSize == 0 && opts.payloadFile == "":
		return errors.New("either --record-size or --payload-file must be specified")
	case opts.recordSize != 0 && opts.payloadFile != "":
		return errors.New("--record-size and --payload-file are mutually exclusive")
	case opts.recordSize < 0:
		return errors.New("--record-size should be greater than zero")
	case opts.throughput == 0:
		return errors.New("--throughput must be positive, or -1 for no limit")
	}
	return nil
}

func runPerfProduce(cmd *cobra.Command, opts perfProduceOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()

	props := map[string]string{}
	if opts.producerConfig != "" {
		content, err := os.ReadFile(opts.producerConfig)
		if err != nil {
			return fmt.Errorf("--producer.config: %w", err)
		}
		if props, err = parsePropertiesFile(string(content)); err != nil {
			return fmt.Errorf("--producer.config %s: %w", opts.producerConfig, err)
		}
	}
	cmdProps, err := parseKeyValues(opts.producerProps, "producer property")
	if err != nil {
		return err
	}
	for k, v := range cmdProps {
		props[k] = v
	}
	pcfg, notes, err := parseProducerProps(props)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, n)
	}

	payloads := payloadSource{size: opts.recordSize, rng: rand.New(rand.NewPCG(0, 0))}
	if opts.payloadFile != "" {
		content, err := os.ReadFile(opts.payloadFile)
		if err != nil {
			return fmt.Errorf("--payload-file: %w", err)
		}
		abs, _ := filepath.Abs(opts.payloadFile)
		fmt.Fprintf(out, "Reading payloads from: %s\n", abs)
		payloads.payloads = splitPayloads(content, unescapeDelimiter(opts.payloadDelimiter))
		if len(payloads.payloads) == 0 {
			return fmt.Errorf("--payload-file %s: no payloads in the file", opts.payloadFile)
		}
		fmt.Fprintf(out, "Number of messages read: %d\n", len(payloads.payloads))
	}

	conn := connSettingsOf(cmd)
	if len(pcfg.brokers) > 0 {
		conn.brokers = pcfg.brokers
	}
	kopts := []kgo.Opt{
		kgo.DefaultProduceTopic(opts.topic),
		kgo.ClientID("perf-producer-client"),
		kgo.AllowAutoTopicCreation(), // as Kafka's producer; the broker decides
		kgo.RecordDeliveryTimeout(max(conn.timeout, 2*time.Minute)),
	}
	kopts = append(kopts, pcfg.kgoOpts()...)
	cl, err := conn.newClient(cmd, kopts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	ctx, stop := signal.NotifyContext(commandContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, firstErr := producePerfRecords(ctx, cl, opts, &payloads, out)
	if failed > 0 {
		return fmt.Errorf("%d of %d records failed: %w", failed, opts.numRecords, firstErr)
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return nil
}

// producePerfRecords runs the send loop, waits for every acknowledgement
// and prints the window lines and the summary to out.
func producePerfRecords(
	ctx context.Context,
	cl *kgo.Client,
	opts perfProduceOptions,
	payloads *payloadSource,
	out io.Writer,
) (failed int64, firstErr error) {
	start := time.Now()
	var mu struct {
		sync.Mutex
		stats    *producerPerfStats
		failed   int64
		firstErr error
	}
	mu.stats = newProducerPerfStats(opts.numRecords, start, producerReportInterval)

	sent := int64(0)
	for ; sent < opts.numRecords && ctx.Err() == nil; sent++ {
		if d := throttleDelay(sent, time.Since(start), opts.throughput); d > time.Millisecond {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		value := payloads.next()
		sendStart := time.Now()
		cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				mu.failed++
				if mu.firstErr == nil {
					mu.firstErr = err
				}
				return
			}
			if line, ok := mu.stats.record(now.Sub(sendStart).Milliseconds(), len(r.Value), now); ok {
				fmt.Fprintln(out, line)
			}
		})
	}
	// Flush ends when every record is acknowledged or failed; each
	// record is bounded by the delivery timeout.
	_ = cl.Flush(context.WithoutCancel(ctx))

	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintln(out, mu.stats.totalLine(time.Now()))
	return mu.failed, mu.firstErr
}

// perfConsumeOptions are kafka-consumer-perf-test's flags.
type perfConsumeOptions struct {
	topic             string
	messages          int64
	group             string
	fetchSize         int32
	timeoutMs         int64
	showDetailedStats bool
	reportingInterval int64
	fromLatest        bool
	hideHeader        bool
	bootstrapServer   string
}

func newPerfConsumeCmd() *cobra.Command {
	var opts perfConsumeOptions
	cmd := &cobra.Command{
		Use:   "consume --topic T --messages N",
		Short: "Consume N records and report throughput",
		Long: `Consume --messages records from --topic and report throughput like
kafka-consumer-perf-test (MB = 1024*1024 bytes; sizes are key + value bytes).

With --group the consumer joins that consumer group, commits what it read,
and partitions without a committed offset start at the earliest offset (the
latest with --from-latest). Without --group it reads every partition
directly, with no group (Kafka's tool always joins a random group; Strata
does not need one to measure fetch throughput).

--timeout is Kafka's: the longest wait, in milliseconds, between records
before giving up (then a WARNING line is printed).`,
		Example: `  strata perf consume --topic bench --messages 1000000 --show-detailed-stats --reporting-interval 1000`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPerfConsume(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.topic, "topic", "", "topic to consume from (required)")
	f.Int64Var(&opts.messages, "messages", 0, "number of records to consume (required)")
	f.StringVar(&opts.group, "group", "", "consumer group id (default: no group, read every partition directly)")
	f.Int32Var(&opts.fetchSize, "fetch-size", 1024*1024, "maximum bytes fetched per partition per request")
	opts.timeoutMs = 10_000
	f.Var((*millisOrDuration)(&opts.timeoutMs), "timeout",
		"maximum time between returned records: milliseconds as in Kafka, or a duration like 10s (default 10000)")
	f.BoolVar(&opts.showDetailedStats, "show-detailed-stats", false, "print stats every --reporting-interval")
	f.Int64Var(&opts.reportingInterval, "reporting-interval", 5_000, "milliseconds between detailed stats lines")
	f.BoolVar(&opts.fromLatest, "from-latest", false, "without a committed offset, start at the latest offset instead of the earliest")
	f.BoolVar(&opts.hideHeader, "hide-header", false, "do not print the header line")
	f.StringVar(&opts.bootstrapServer, "bootstrap-server", "", "brokers to connect to (overrides --brokers)")
	for _, name := range []string{"topic", "messages"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// millisOrDuration is a flag holding milliseconds that also accepts a Go
// duration ("10s"), so perf consume's Kafka --timeout (milliseconds) does
// not reject the global --timeout syntax it shadows.
type millisOrDuration int64

func (m *millisOrDuration) String() string { return strconv.FormatInt(int64(*m), 10) }
func (m *millisOrDuration) Type() string   { return "ms" }

func (m *millisOrDuration) Set(s string) error {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*m = millisOrDuration(n)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want milliseconds or a duration such as 10s")
	}
	*m = millisOrDuration(d.Milliseconds())
	return nil
}

func runPerfConsume(cmd *cobra.Command, opts perfConsumeOptions) error {
	switch {
	case opts.messages <= 0:
		return errors.New("--messages should be greater than zero")
	case opts.reportingInterval <= 0:
		return errors.New("--reporting-interval must be greater than 0")
	case opts.fetchSize <= 0:
		return errors.New("--fetch-size must be greater than 0")
	case opts.timeoutMs < 0:
		return errors.New("--timeout must not be negative")
	}
	conn := connSettingsOf(cmd)
	if opts.bootstrapServer != "" {
		conn.brokers = seedBrokers(opts.bootstrapServer)
	}
	if err := checkConsumable(cmd, conn, opts.topic, -1, opts.group); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if !opts.hideHeader {
		fmt.Fprintln(out, consumerPerfHeader(opts.showDetailedStats))
	}

	reset := kgo.NewOffset().AtStart()
	if opts.fromLatest {
		reset = kgo.NewOffset().AtEnd()
	}
	// rebalance tracks time spent joining: from start (or the last loss
	// of every partition) to the next assignment, as Kafka's listener.
	var rebalance struct {
		sync.Mutex
		joinStart     time.Time
		assigned      int
		totalMs       int64
		sinceReportMs int64
	}
	start := time.Now()
	rebalance.joinStart = start
	onAssigned := func(_ context.Context, _ *kgo.Client, added map[string][]int32) {
		rebalance.Lock()
		defer rebalance.Unlock()
		if rebalance.assigned == 0 {
			ms := time.Since(rebalance.joinStart).Milliseconds()
			rebalance.totalMs += ms
			rebalance.sinceReportMs += ms
		}
		for _, ps := range added {
			rebalance.assigned += len(ps)
		}
	}
	onRevoked := func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
		rebalance.Lock()
		defer rebalance.Unlock()
		for _, ps := range lost {
			rebalance.assigned -= len(ps)
		}
		if rebalance.assigned <= 0 {
			rebalance.assigned = 0
			rebalance.joinStart = time.Now()
		}
	}
	clientOpts := []kgo.Opt{
		kgo.ClientID("perf-consumer-client"),
		kgo.ConsumeTopics(opts.topic),
		kgo.ConsumeStartOffset(reset),
		kgo.ConsumeResetOffset(reset),
		kgo.FetchMaxPartitionBytes(opts.fetchSize),
		kgo.FetchMaxBytes(max(opts.fetchSize, 50<<20)),
		kgo.DisableFetchCRCValidation(),
		kgo.WithPools(newRecordSlabPool()),
	}
	if opts.group != "" {
		clientOpts = append(clientOpts,
			kgo.ConsumerGroup(opts.group),
			kgo.OnPartitionsAssigned(onAssigned),
			kgo.OnPartitionsRevoked(onRevoked),
			kgo.OnPartitionsLost(onRevoked),
		)
	}
	cl, err := conn.newClient(cmd, clientOpts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	ctx, stop := signal.NotifyContext(commandContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()

	idleLimit := time.Duration(opts.timeoutMs) * time.Millisecond
	reportEvery := time.Duration(opts.reportingInterval) * time.Millisecond
	var (
		messages, bytes         int64
		lastMessages, lastBytes int64
		lastReport              = time.Now()
		lastConsumed            = lastReport
		now                     = lastReport
	)
	for messages < opts.messages && now.Sub(lastConsumed) <= idleLimit && ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		fetches := cl.PollRecords(pollCtx, int(min(opts.messages-messages, 1<<20)))
		cancel()
		now = time.Now()
		var fetchErr error
		fetches.EachError(func(topic string, partition int32, err error) {
			if fetchErr == nil && !isContextError(err) && !errors.Is(err, kgo.ErrClientClosed) {
				fetchErr = fmt.Errorf("topic %q partition %d: %w", topic, partition, err)
			}
		})
		if fetchErr != nil {
			return fetchErr
		}
		if fetches.NumRecords() > 0 {
			lastConsumed = now
		}
		fetches.EachRecord(func(r *kgo.Record) {
			messages++
			bytes += int64(len(r.Key) + len(r.Value))
			r.Recycle()
			if now.Sub(lastReport) < reportEvery {
				return
			}
			if opts.showDetailedStats {
				rebalance.Lock()
				inInterval := rebalance.sinceReportMs
				rebalance.Unlock()
				fmt.Fprintln(out, consumerProgressLine(consumerProgress{
					lastReport: lastReport, now: now,
					bytes: bytes, lastBytes: lastBytes,
					messages: messages, lastMessages: lastMessages,
					rebalanceMsInThisInterval: inInterval,
				}))
			}
			rebalance.Lock()
			rebalance.sinceReportMs = 0
			rebalance.Unlock()
			lastReport, lastMessages, lastBytes = now, messages, bytes
		})
	}
	end := time.Now()
	// The custom revoke callback replaces kgo's commit-on-revoke, so
	// commit what was consumed before Close leaves the group (Kafka's
	// consumer commits on close with auto-commit on).
	var commitErr error
	if opts.group != "" {
		commitCtx, cancel := conn.requestContext(cmd)
		defer cancel()
		commitErr = cl.CommitUncommittedOffsets(commitCtx)
	}
	if messages < opts.messages {
		fmt.Fprintf(out, "WARNING: Exiting before consuming the expected number of messages: timeout (%d ms) exceeded. "+
			"You can use the --timeout option to increase the timeout.\n", opts.timeoutMs)
	}
	if !opts.showDetailedStats {
		rebalance.Lock()
		rebalanceMs := rebalance.totalMs
		rebalance.Unlock()
		fmt.Fprintln(out, consumerSummaryLine(consumerPerfTotals{
			start: start, end: end, bytes: bytes, messages: messages, rebalanceMs: rebalanceMs,
		}))
	}
	if commitErr != nil {
		return fmt.Errorf("group %q: commit offsets: %w", opts.group, commitErr)
	}
	return nil
}

// recordSlabPool gives franz-go its record slices back (kgo.WithPools,
// Record.Recycle): without it every fetched batch allocates, and the
// runtime clears, a slice of Records (about 200 bytes each), 400 MB per
// two million records.
type recordSlabPool struct{ free chan []kgo.Record }

func newRecordSlabPool() *recordSlabPool { return &recordSlabPool{free: make(chan []kgo.Record, 64)} }

func (p *recordSlabPool) GetRecords(n int) []kgo.Record {
	select {
	case s := <-p.free:
		if cap(s) >= n {
			return s[:n]
		}
	default:
	}
	return make([]kgo.Record, n)
}

func (p *recordSlabPool) PutRecords(s []kgo.Record) {
	select {
	case p.free <- s:
	default:
	}
}

package main

// strata perf omb WORKLOAD.yaml: runs an OpenMessaging Benchmark workload
// file against any Kafka endpoint with franz-go producers and consumers,
// and prints and writes OMB's results (see perf_omb_stats.go for the pure
// parts and the line formats).
//
// The run, in order:
//  1. create the workload's topics (random suffixes; deleted at the end
//     unless --keep-topics);
//  2. start subscriptionsPerTopic consumer groups per topic with
//     consumerPerSubscription consumers each, and wait until every group
//     owns every partition;
//  3. start producersPerTopic producers per topic sharing producerRate;
//     each record carries its send time in the omb-send-ns header, so
//     consumers measure end-to-end latency;
//  4. warm up (figures discarded), then the test phase; in backlog mode
//     the test phase pauses the consumers until the backlog is built,
//     resumes them and lasts at least until it is drained;
//  5. stop the producers, let the consumers catch up, print the
//     aggregated lines and write --output and --histogram-dir.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/time/rate"
)

const (
	// ombSendTimeHeader carries a record's send time, Unix nanoseconds
	// big-endian, for the end-to-end latency.
	ombSendTimeHeader = "omb-send-ns"
	// ombPollInterval is how often the phase loop checks its clock and
	// the backlog.
	ombPollInterval = 20 * time.Millisecond
	// ombCatchUpLimit bounds the wait for consumers after the producers stop.
	ombCatchUpLimit = 10 * time.Second
)

// perfOMBOptions are perf omb's flags.
type perfOMBOptions struct {
	bootstrapServer   string
	output            string
	histogramDir      string
	testDuration      time.Duration
	warmupDuration    time.Duration
	topicPrefix       string
	replicationFactor int16
	topicConfigs      []string
	acks              string
	compression       string
	keepTopics        bool
}

func newPerfOMBCmd() *cobra.Command {
	var opts perfOMBOptions
	cmd := &cobra.Command{
		Use:   "omb WORKLOAD.yaml",
		Short: "Run an OpenMessaging Benchmark workload file and report OMB's results",
		Long: `Run an OpenMessaging Benchmark (OMB) workload file against the brokers: create
the topics, start the consumer groups and producers it describes, warm up,
then measure for the test duration. Every 10 seconds prints OMB's period
line (publish and consume rate, backlog, publish latency, publish delay);
at the end the aggregated publish and end-to-end latency percentiles.

Workload fields are OMB's: name, topics, partitionsPerTopic, messageSize,
payloadFile, useRandomizedPayloads, randomBytesRatio,
randomizedPayloadPoolSize, keyDistributor (NO_KEY, KEY_ROUND_ROBIN,
RANDOM_NANO), subscriptionsPerTopic, consumerPerSubscription,
producersPerTopic, producerRate (messages/s for the whole workload),
consumerBacklogSizeGB, testDurationMinutes, warmupDurationMinutes.

producerRate 0 runs the producers unthrottled; OMB instead searches for the
highest rate the consumers keep up with, which this command does not do.
consumerBacklogSizeGB > 0 pauses the consumers at the start of the test
until that backlog is built, then resumes them and reports the drain rate.

--output writes OMB's result JSON (TestResult); --histogram-dir writes the
publish and end-to-end latency histograms as HdrHistogram .hgrm files.`,
		Example: `  strata perf omb deploy/perf/1-topic-16-partitions-1kb-50mb.yaml --bootstrap-server 127.0.0.1:9092
  strata perf omb my.yaml --warmup-duration 10s --test-duration 1m --output result.json --histogram-dir hgrm/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPerfOMB(cmd, args[0], opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.bootstrapServer, "bootstrap-server", "", "brokers to connect to (overrides --brokers)")
	f.StringVar(&opts.output, "output", "", "write OMB's result JSON to this file")
	f.StringVar(&opts.histogramDir, "histogram-dir", "", "write publish-latency.hgrm and end-to-end-latency.hgrm here")
	f.DurationVar(&opts.testDuration, "test-duration", 0, "test phase length, replacing the workload's testDurationMinutes")
	f.DurationVar(&opts.warmupDuration, "warmup-duration", -1, "warmup length, replacing the workload's warmupDurationMinutes")
	f.StringVar(&opts.topicPrefix, "topic-prefix", "test-topic", "prefix of the created topics' names")
	f.Int16Var(&opts.replicationFactor, "replication-factor", -1, "replication factor of the created topics (-1: the cluster default)")
	f.StringArrayVarP(&opts.topicConfigs, "topic-config", "c", nil,
		"config key=value of the created topics (repeatable), as OMB's driver topicConfig: e.g. retention.bytes to bound the disk an unthrottled run fills")
	f.StringVar(&opts.acks, "acks", "all", "producer acks: all (OMB's Kafka driver), 1 or 0; 1 and 0 turn off idempotence as Kafka's producer must")
	f.StringVar(&opts.compression, "compression", "none",
		"producer batch compression: none (OMB's Kafka driver leaves the Java producer's default), snappy, lz4, zstd or gzip (its kafka-compression-* driver files)")
	f.BoolVar(&opts.keepTopics, "keep-topics", false, "do not delete the created topics at the end")
	return cmd
}

// ombPlan is a workload resolved for one run.
type ombPlan struct {
	workload       ombWorkload
	payloads       [][]byte
	messageSize    int
	warmupDuration time.Duration
	testDuration   time.Duration
}

func loadOMBPlan(path string, opts perfOMBOptions, rng *rand.Rand) (ombPlan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ombPlan{}, fmt.Errorf("workload: %w", err)
	}
	w, err := parseOMBWorkload(data)
	if err != nil {
		return ombPlan{}, fmt.Errorf("workload %s: %w", path, err)
	}
	var content []byte
	if w.PayloadFile != "" {
		if content, err = os.ReadFile(w.PayloadFile); err != nil {
			return ombPlan{}, fmt.Errorf("workload %s: payloadFile: %w", path, err)
		}
		if len(content) == 0 {
			return ombPlan{}, fmt.Errorf("workload %s: payloadFile %s is empty", path, w.PayloadFile)
		}
	}
	plan := ombPlan{
		workload:       w,
		payloads:       ombPayloads(w, content, rng),
		warmupDuration: minutes(*w.WarmupDurationMinutes),
		testDuration:   minutes(w.TestDurationMinutes),
	}
	plan.messageSize = len(plan.payloads[0])
	if opts.warmupDuration >= 0 {
		plan.warmupDuration = opts.warmupDuration
	}
	if opts.testDuration > 0 {
		plan.testDuration = opts.testDuration
	}
	if plan.testDuration <= 0 {
		return ombPlan{}, fmt.Errorf("workload %s: testDurationMinutes must be positive (or give --test-duration)", path)
	}
	return plan, nil
}

func runPerfOMB(cmd *cobra.Command, path string, opts perfOMBOptions) error {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	plan, err := loadOMBPlan(path, opts, rng)
	if err != nil {
		return err
	}
	producerOpts, err := ombAcks(opts.acks)
	if err != nil {
		return err
	}
	codec, err := parseCompression(opts.compression)
	if err != nil {
		return fmt.Errorf("--compression: %w", err)
	}
	producerOpts = append(producerOpts, kgo.ProducerBatchCompression(codec))
	kv, err := parseKeyValues(opts.topicConfigs, "topic-config")
	if err != nil {
		return err
	}
	conn := connSettingsOf(cmd)
	if opts.bootstrapServer != "" {
		conn.brokers = seedBrokers(opts.bootstrapServer)
	}
	adm, err := conn.newAdmin(cmd)
	if err != nil {
		return err
	}
	defer adm.Close()

	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	w := plan.workload
	topics := make([]string, w.Topics)
	for i := range topics {
		topics[i] = fmt.Sprintf("%s-%07d-%s", opts.topicPrefix, i, randomName(rng))
	}
	createCtx, cancel := conn.requestContext(cmd)
	created, err := adm.CreateTopics(createCtx, int32(w.PartitionsPerTopic), opts.replicationFactor, configPointers(kv), topics...)
	cancel()
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	var createErrs []error
	var toDelete []string
	for _, t := range topics {
		if res := created[t]; res.Err != nil {
			createErrs = append(createErrs, topicError(t, res.Err, res.ErrMessage))
		} else {
			toDelete = append(toDelete, t)
		}
	}
	if !opts.keepTopics {
		defer func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(commandContext(cmd)), conn.timeout)
			defer cancel()
			deleted, err := adm.DeleteTopics(ctx, toDelete...)
			if err == nil {
				err = deleted.Error()
			}
			if err != nil {
				fmt.Fprintf(stderr, "delete topics: %v\n", err)
			}
		}()
	}
	if len(createErrs) > 0 {
		return errors.Join(createErrs...)
	}
	fmt.Fprintf(out, "Created %d topics with %d partitions each: %s\n", len(topics), w.PartitionsPerTopic, topics)

	ctx, stop := signal.NotifyContext(commandContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first Ctrl-C the run winds down (flush, delete topics); a
	// second one gets the default handling and kills the process.
	go func() { <-ctx.Done(); stop() }()
	run := &ombRun{plan: plan, topics: topics, out: out, conn: conn, cmd: cmd, rng: rng, producerOpts: producerOpts}
	run.mu.rec = newOMBRecorder(time.Now())
	res, err := run.execute(ctx)
	if err != nil {
		if ctx.Err() != nil && commandContext(cmd).Err() == nil {
			return errors.New("interrupted")
		}
		return err
	}
	return writeOMBOutputs(opts, res, run)
}

// ombAcks is the producer options for --acks: all keeps franz-go's
// idempotent default; 1 and 0 turn idempotence off, which needs acks=all.
func ombAcks(acks string) ([]kgo.Opt, error) {
	switch acks {
	case "all", "-1":
		return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}, nil
	case "1":
		return []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, nil
	case "0":
		return []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}, nil
	}
	return nil, fmt.Errorf("invalid --acks %q: want all, 1 or 0", acks)
}

// randomName is 7 random letters, as OMB's topic and subscription suffixes.
func randomName(rng *rand.Rand) string {
	b := make([]byte, 7)
	fillRandomLetters(b, rng)
	return string(b)
}

// ombRun is one run's clients and statistics.
type ombRun struct {
	plan   ombPlan
	topics []string
	out    io.Writer
	conn   connSettings
	cmd    *cobra.Command
	rng    *rand.Rand
	// producerOpts are the producers' acks and compression settings.
	producerOpts []kgo.Opt

	mu struct {
		sync.Mutex
		rec *ombRecorder
	}
	consumers []*ombConsumer
	// unacked counts the messages the producers' final flush gave up on.
	unacked atomic.Int64
	// testLatencies are the test phase's histograms, kept for the files.
	testLatencies ombLatencies
}

// ombMaxPartitionFetchBytes is OMB's Kafka driver's consumer
// max.partition.fetch.bytes (franz-go's default is 1 MiB).
const ombMaxPartitionFetchBytes = 10 << 20

// ombConsumer is one consumer client and how many partitions it owns.
type ombConsumer struct {
	client   *kgo.Client
	group    string
	assigned atomic.Int64
}

// execute runs the consumers, producers and both phases, and returns the
// result of the test phase.
func (r *ombRun) execute(ctx context.Context) (*ombResult, error) {
	w := r.plan.workload
	consumeCtx, stopConsumers := context.WithCancel(ctx)
	var consumerWG sync.WaitGroup
	defer func() {
		stopConsumers()
		consumerWG.Wait()
		for _, c := range r.consumers {
			c.client.Close()
		}
	}()
	for _, topic := range r.topics {
		for sub := range w.SubscriptionsPerTopic {
			group := fmt.Sprintf("sub-%03d-%s", sub, randomName(r.rng))
			for range w.ConsumerPerSubscription {
				c, err := r.newConsumer(topic, group)
				if err != nil {
					return nil, err
				}
				r.consumers = append(r.consumers, c)
				consumerWG.Add(1)
				go func() {
					defer consumerWG.Done()
					r.consume(consumeCtx, c.client)
				}()
			}
		}
	}
	if err := r.waitForAssignments(ctx); err != nil {
		return nil, err
	}

	produceCtx, stopProducers := context.WithCancel(ctx)
	var producerWG sync.WaitGroup
	stopAndFlush := sync.OnceFunc(func() { stopProducers(); producerWG.Wait() })
	defer stopAndFlush()
	rates := splitProducerRate(w.ProducerRate, w.Topics*w.ProducersPerTopic)
	if w.ProducerRate == 0 {
		fmt.Fprintln(r.out, "producerRate 0: producers run unthrottled (OMB would search for the highest sustainable rate; this tool does not)")
	}
	for i, topic := range r.topics {
		for p := range w.ProducersPerTopic {
			cl, err := r.conn.newClient(r.cmd, append([]kgo.Opt{
				kgo.DefaultProduceTopic(topic),
				kgo.ClientID("strata-perf-omb-producer"),
				kgo.ProducerLinger(time.Millisecond), // OMB's Kafka driver: linger.ms=1
				kgo.RecordDeliveryTimeout(max(r.conn.timeout, 2*time.Minute)),
			}, r.producerOpts...)...)
			if err != nil {
				return nil, err
			}
			producerWG.Add(1)
			seed := r.rng.Uint64()
			go func() {
				defer producerWG.Done()
				defer cl.Close()
				r.produce(produceCtx, cl, rates[i*w.ProducersPerTopic+p], rand.New(rand.NewPCG(seed, 1)))
			}()
		}
	}

	// Periods count from here, not from the groups' joining.
	r.mu.Lock()
	r.mu.rec.resetPhase(time.Now())
	r.mu.Unlock()
	if r.plan.warmupDuration > 0 {
		fmt.Fprintf(r.out, "----- Starting warm-up traffic (%s) -----\n", r.plan.warmupDuration)
		if _, err := r.phase(ctx, r.plan.warmupDuration, nil, false); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	r.mu.rec.resetPhase(time.Now())
	r.mu.Unlock()
	fmt.Fprintf(r.out, "----- Starting benchmark traffic (%s) -----\n", r.plan.testDuration)
	res := newOMBResult(w, r.plan.messageSize)
	drain, err := r.phase(ctx, r.plan.testDuration, res, w.ConsumerBacklogSizeGB > 0)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	phase, lat, testElapsed := r.mu.rec.endPhase(time.Now())
	r.mu.Unlock()
	r.testLatencies = lat

	stopAndFlush()
	unacked := r.unacked.Load()
	if w.SubscriptionsPerTopic > 0 && unacked == 0 {
		r.waitForCatchUp(ctx)
	}
	res.setAggregated(lat)
	fmt.Fprintln(r.out, ombThroughputLine(phase, testElapsed))
	fmt.Fprintln(r.out, ombAggregatedLine("Pub", summarize(lat.publish, 1000)))
	fmt.Fprintln(r.out, ombAggregatedLine("E2E", summarize(lat.endToEnd, 1000)))
	if unacked > 0 {
		return nil, fmt.Errorf("%d messages not acknowledged within %s after the run (is the broker up?)", unacked, r.conn.timeout)
	}
	if drain != nil {
		res.setDrain(*drain)
		fmt.Fprintln(r.out, ombDrainLine(*drain))
	}
	r.mu.Lock()
	sent, received := r.mu.rec.totalSent, r.mu.rec.totalRecv
	r.mu.Unlock()
	fmt.Fprintf(r.out, "----- Run totals: %d messages published, %d consumed\n", sent, received)
	return res, nil
}

func (r *ombRun) newConsumer(topic, group string) (*ombConsumer, error) {
	c := &ombConsumer{group: group}
	cl, err := r.conn.newClient(r.cmd,
		kgo.ClientID("strata-perf-omb-consumer"),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxPartitionBytes(ombMaxPartitionFetchBytes),
		kgo.WithPools(newRecordSlabPool()), // consume recycles each record
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, added map[string][]int32) {
			for _, ps := range added {
				c.assigned.Add(int64(len(ps)))
			}
		}),
		// A custom revoke callback replaces kgo's commit on revoke: commit
		// here so a partition that moves is not read again from the start.
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
			_ = cl.CommitUncommittedOffsets(ctx)
			for _, ps := range lost {
				c.assigned.Add(-int64(len(ps)))
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			for _, ps := range lost {
				c.assigned.Add(-int64(len(ps)))
			}
		}),
	)
	if err != nil {
		return nil, err
	}
	c.client = cl
	return c, nil
}

// waitForAssignments waits until every group owns all its topic's
// partitions, spread over as many of its consumers as there are
// partitions, so no rebalance moves partitions once producing starts.
func (r *ombRun) waitForAssignments(ctx context.Context) error {
	w := r.plan.workload
	ready := func() bool {
		owned, owners := map[string]int64{}, map[string]int{}
		for _, c := range r.consumers {
			n := c.assigned.Load()
			owned[c.group] += n
			if n > 0 {
				owners[c.group]++
			}
		}
		for group, n := range owned {
			if n != int64(w.PartitionsPerTopic) || owners[group] != min(w.ConsumerPerSubscription, w.PartitionsPerTopic) {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(r.conn.timeout)
	for !ready() {
		if time.Now().After(deadline) {
			return fmt.Errorf("consumer groups did not get all partitions within %s", r.conn.timeout)
		}
		if !sleepCtx(ctx, ombPollInterval) {
			return ctx.Err()
		}
	}
	return nil
}

// sleepCtx sleeps d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// ombPaceGranularity is how far ahead of its time a rate-limited message
// may be sent: the producers' linger (OMB's Kafka driver: linger.ms=1).
const ombPaceGranularity = time.Millisecond

// produce sends until ctx ends, at ratePerSec (0: no limit). The publish
// delay is how late each send is against the rate limiter's schedule.
func (r *ombRun) produce(ctx context.Context, cl *kgo.Client, ratePerSec float64, rng *rand.Rand) {
	var limiter *rate.Limiter
	if ratePerSec > 0 {
		// A burst of 10 ms of messages lets a late sleep catch up.
		limiter = rate.NewLimiter(rate.Limit(ratePerSec), max(1, int(ratePerSec/100)))
	}
	keys := newOMBKeys(r.plan.workload.KeyDistributor, rng)
	payloads := r.plan.payloads
	for ctx.Err() == nil {
		// One clock read per message unless it has to wait: at a few
		// hundred thousand messages a second the reads add up (kvm-clock).
		now := time.Now()
		intended, sendTime := now, now
		if limiter != nil {
			reservation := limiter.ReserveN(now, 1)
			// Messages due within ombPaceGranularity go now: franz-go
			// lingers that long before sending anyway, and waking per
			// message (every few µs) cost the client a core's tenth.
			if wait := reservation.DelayFrom(now); wait >= ombPaceGranularity {
				intended = now.Add(wait)
				if !sleepCtx(ctx, wait) {
					reservation.Cancel()
					break
				}
				sendTime = time.Now()
			}
		}
		delay := max(sendTime.Sub(intended), 0)
		rec := &kgo.Record{
			Key:     keys.key(),
			Value:   payloads[rng.IntN(len(payloads))],
			Headers: []kgo.RecordHeader{{Key: ombSendTimeHeader, Value: binary.BigEndian.AppendUint64(nil, uint64(sendTime.UnixNano()))}},
		}
		cl.Produce(ctx, rec, func(rec *kgo.Record, err error) {
			latency := time.Since(sendTime)
			if err != nil && ctx.Err() != nil {
				return // cut off by the end of the run, not a failure
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if err != nil {
				r.mu.rec.publishFailed()
				return
			}
			r.mu.rec.published(len(rec.Value), latency, delay)
		})
	}
	// What was handed to kgo is delivered (or fails) before the client
	// closes, within --timeout: franz-go's idempotent producer keeps
	// retrying records in flight to a broker that is gone, past their
	// delivery timeout, so an unbounded flush would never return.
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.conn.timeout)
	defer cancel()
	if cl.Flush(flushCtx) != nil {
		r.unacked.Add(cl.BufferedProduceRecords())
	}
}

// consume polls until ctx ends and records each record's end-to-end
// latency from its send-time header.
func (r *ombRun) consume(ctx context.Context, cl *kgo.Client) {
	type sample struct {
		bytes    int
		endToEnd time.Duration
	}
	var batch []sample
	for {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return
		}
		now := time.Now()
		batch = batch[:0]
		fetches.EachRecord(func(rec *kgo.Record) {
			s := sample{bytes: len(rec.Value), endToEnd: now.Sub(rec.Timestamp)}
			for _, h := range rec.Headers {
				if h.Key == ombSendTimeHeader && len(h.Value) == 8 {
					s.endToEnd = now.Sub(time.Unix(0, int64(binary.BigEndian.Uint64(h.Value))))
				}
			}
			rec.Recycle()
			batch = append(batch, s)
		})
		if len(batch) == 0 {
			continue
		}
		r.mu.Lock()
		for _, s := range batch {
			r.mu.rec.received(s.bytes, s.endToEnd, now)
		}
		r.mu.Unlock()
	}
}

// backlogState is where backlog mode is in the test phase.
type backlogState int

const (
	backlogOff backlogState = iota
	backlogBuilding
	backlogDraining
	backlogDrained
)

// phase runs one phase for d, printing a period line every
// ombStatsInterval (and one at the end); res, if not nil, collects the
// periods. In backlog mode it pauses the consumers until the backlog is
// built, resumes them, and does not end before the backlog is drained.
func (r *ombRun) phase(ctx context.Context, d time.Duration, res *ombResult, backlogMode bool) (*ombDrain, error) {
	w := r.plan.workload
	start := time.Now()
	end := start.Add(d)
	nextPeriod := start.Add(ombStatsInterval)
	state := backlogOff
	if backlogMode {
		state = backlogBuilding
		r.pauseConsumers(true)
		fmt.Fprintf(r.out, "----- Building a backlog of %s MB with the consumers paused\n",
			oneDecimal(float64(w.backlogTargetBytes())/bytesPerMB))
	}
	var (
		drain      *ombDrain
		drainStart time.Time
	)
	for {
		if !sleepCtx(ctx, ombPollInterval) {
			return nil, ctx.Err()
		}
		now := time.Now()
		done := !now.Before(end) && (state == backlogOff || state == backlogDrained)
		r.mu.Lock()
		var period *ombPeriod
		if done || !now.Before(nextPeriod) {
			p := r.mu.rec.endPeriod(now, w.SubscriptionsPerTopic)
			period = &p
			nextPeriod = now.Add(ombStatsInterval)
		}
		backlog, drainedAt := r.mu.rec.backlog(w.SubscriptionsPerTopic), r.mu.rec.drainedAt
		if state == backlogBuilding && backlog*int64(r.plan.messageSize) >= w.backlogTargetBytes() {
			r.mu.rec.watchDrain(w.SubscriptionsPerTopic)
		}
		r.mu.Unlock()
		if period != nil {
			fmt.Fprintln(r.out, ombPeriodLine(*period))
			if res != nil {
				res.addPeriod(*period)
			}
		}
		switch {
		case state == backlogBuilding && backlog*int64(r.plan.messageSize) >= w.backlogTargetBytes():
			state = backlogDraining
			drain = &ombDrain{messages: backlog, bytes: backlog * int64(r.plan.messageSize)}
			fmt.Fprintf(r.out, "----- Backlog of %d messages built; resuming the consumers\n", backlog)
			drainStart = time.Now()
			r.pauseConsumers(false)
		case state == backlogDraining && !drainedAt.IsZero():
			state = backlogDrained
			drain.elapsed = drainedAt.Sub(drainStart)
		}
		if done {
			return drain, nil
		}
	}
}

func (r *ombRun) pauseConsumers(pause bool) {
	for _, c := range r.consumers {
		if pause {
			c.client.PauseFetchTopics(r.topics...)
		} else {
			c.client.ResumeFetchTopics(r.topics...)
		}
	}
}

// waitForCatchUp waits, up to ombCatchUpLimit, until the consumers have
// read everything the producers sent.
func (r *ombRun) waitForCatchUp(ctx context.Context) {
	deadline := time.Now().Add(ombCatchUpLimit)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		backlog := r.mu.rec.backlog(r.plan.workload.SubscriptionsPerTopic)
		r.mu.Unlock()
		if backlog == 0 || !sleepCtx(ctx, ombPollInterval) {
			return
		}
	}
}

// writeOMBOutputs writes --output and --histogram-dir.
func writeOMBOutputs(opts perfOMBOptions, res *ombResult, run *ombRun) error {
	if opts.output != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		if err := os.WriteFile(opts.output, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("--output: %w", err)
		}
	}
	if opts.histogramDir != "" {
		if err := os.MkdirAll(opts.histogramDir, 0o755); err != nil {
			return fmt.Errorf("--histogram-dir: %w", err)
		}
		files := map[string]*hdrhistogram.Histogram{
			"publish-latency.hgrm":    run.testLatencies.publish,
			"end-to-end-latency.hgrm": run.testLatencies.endToEnd,
		}
		for name, h := range files {
			f, err := os.Create(filepath.Join(opts.histogramDir, name))
			if err != nil {
				return fmt.Errorf("--histogram-dir: %w", err)
			}
			err = writeHgrm(f, h)
			if closeErr := f.Close(); err == nil {
				err = closeErr
			}
			if err != nil {
				return fmt.Errorf("--histogram-dir: %s: %w", name, err)
			}
		}
	}
	return nil
}

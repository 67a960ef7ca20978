package main

// strata produce: one record per stdin line, produced asynchronously with
// kgo, flushed before exit. The command fails if any record failed.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() { rootCmd.AddCommand(newProduceCmd()) }

// produceOptions are the flags of `strata produce`.
type produceOptions struct {
	keySeparator string
	compression  string
	acks         string
	partition    int32
	linger       time.Duration
	headers      []string
	verbose      bool
	schemas      produceSchemaOptions
}

func newProduceCmd() *cobra.Command {
	var opts produceOptions
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce stdin lines to a topic, one record per line",
		Long: `Produce stdin lines to a topic, one record per line (the newline is not
part of the value; an empty line is an empty record).

With --key-separator S, each line is split at the first S into key and value;
a line without S becomes a record with a null key and the whole line as value.

With --value-schema SUBJECT[:VERSION] (default the latest version), each
value is a JSON value that is serialized with that schema from the schema
registry (--schema-registry) in Confluent's wire format, as Confluent's
Avro, Protobuf and JSON Schema serializers write it; --key-schema does the
same for keys. --value-schema-file FILE registers FILE first (under
--value-schema's subject, or TOPIC-value), as Confluent's serializers do
with auto.register.schemas. A line that is not JSON or does not fit the
schema is reported with its line number on stderr and not sent; the other
lines are, and the command exits non-zero, as for records the broker
refuses.

All records are flushed before exit. The command prints nothing on success
(use -v for one line per record on stderr) and exits non-zero if any record
could not be produced.`,
		Example: `  echo hello | strata produce greetings
  printf 'k1:v1\nk2:v2\n' | strata produce orders --key-separator : --acks all --compression zstd
  echo '{"id":1,"name":"Ann"}' | strata produce users --value-schema users-value
  echo '{"id":1}' | strata produce users --value-schema-file user.avsc`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("partition") {
				opts.partition = -1
			}
			return runProduce(cmd, args[0], opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.keySeparator, "key-separator", "K", "", "split each line into key and value at the first occurrence of this string")
	f.StringVarP(&opts.compression, "compression", "z", "none", "batch compression: none, gzip, snappy, lz4 or zstd")
	f.StringVar(&opts.acks, "acks", "all", "required acknowledgements: all (= -1), 1 or 0")
	f.Int32VarP(&opts.partition, "partition", "p", -1, "produce every record to this partition (default: partitioner picks)")
	f.DurationVar(&opts.linger, "linger", 0, "wait up to this long to fill batches (e.g. 5ms)")
	f.StringArrayVarP(&opts.headers, "header", "H", nil, "header key=value added to every record (repeatable)")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print each record's partition and offset to stderr, and a summary")
	opts.schemas.addFlags(cmd)
	return cmd
}

// produceClientOpts turns produce flags into kgo options.
func produceClientOpts(opts produceOptions) ([]kgo.Opt, error) {
	codec, err := parseCompression(opts.compression)
	if err != nil {
		return nil, err
	}
	acks, err := parseAcks(opts.acks)
	if err != nil {
		return nil, err
	}
	kopts := []kgo.Opt{
		kgo.ProducerBatchCompression(codec),
		kgo.RequiredAcks(acks),
		kgo.ProducerLinger(opts.linger),
	}
	if acks != kgo.AllISRAcks() {
		// Idempotent writes need acks=all; with fewer acks the
		// client must not try to be idempotent.
		kopts = append(kopts, kgo.DisableIdempotentWrite())
	}
	if opts.partition >= 0 {
		kopts = append(kopts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	return kopts, nil
}

// parseCompression maps a codec name to kgo's codec.
func parseCompression(name string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("unknown compression %q: want none, gzip, snappy, lz4 or zstd", name)
}

// parseAcks maps Kafka's acks values (all, -1, 0, 1) to kgo's Acks.
func parseAcks(v string) (kgo.Acks, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "all", "-1":
		return kgo.AllISRAcks(), nil
	case "1":
		return kgo.LeaderAck(), nil
	case "0":
		return kgo.NoAck(), nil
	}
	return kgo.Acks{}, fmt.Errorf("invalid acks %q: want all, -1, 0 or 1", v)
}

// splitKeyValue splits line into key and value at the first sep. Without
// a separator (or when sep is empty) the key is nil and the line is the
// value.
func splitKeyValue(line []byte, sep string) (key, value []byte) {
	if sep == "" {
		return nil, line
	}
	k, v, ok := bytes.Cut(line, []byte(sep))
	if !ok {
		return nil, line
	}
	return k, v
}

// produceTally collects delivery outcomes from kgo's promise goroutine.
type produceTally struct {
	mu struct {
		sync.Mutex
		delivered int64
		failed    int64
		firstErr  error
		logged    int // error lines printed
	}
}

func (t *produceTally) succeeded() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.delivered++
}

// fail counts a record that failed (or a line that was refused) and
// prints "line N: err" on w, the first maxLoggedProduceErrors times.
func (t *produceTally) fail(w io.Writer, lineNo any, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.failed++
	if t.mu.firstErr == nil {
		t.mu.firstErr = err
	}
	switch {
	case t.mu.logged < maxLoggedProduceErrors:
		fmt.Fprintf(w, "line %v: %v\n", lineNo, err)
	case t.mu.logged == maxLoggedProduceErrors:
		fmt.Fprintln(w, "(further record errors not shown)")
	}
	t.mu.logged++
}

func (t *produceTally) result() (delivered, failed int64, firstErr error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.delivered, t.mu.failed, t.mu.firstErr
}

func runProduce(cmd *cobra.Command, topic string, opts produceOptions) error {
	headerKV, err := parseKeyValues(opts.headers, "header")
	if err != nil {
		return err
	}
	var headers []kgo.RecordHeader
	for _, k := range sortedKeys(headerKV) {
		headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(headerKV[k])})
	}
	kopts, err := produceClientOpts(opts)
	if err != nil {
		return err
	}
	conn := connSettingsOf(cmd)
	encodeKey, encodeValue, err := opts.schemas.encoders(cmd, topic, opts.keySeparator)
	if err != nil {
		return err
	}
	kopts = append(kopts,
		kgo.DefaultProduceTopic(topic),
		kgo.AllowAutoTopicCreation(), // the broker's auto.create.topics.enable decides
		kgo.RecordDeliveryTimeout(conn.timeout),
		kgo.ProduceRequestTimeout(conn.timeout),
	)
	cl, err := conn.newClient(cmd, kopts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	ctx := commandContext(cmd)
	stderr := cmd.ErrOrStderr()
	var (
		tally    produceTally
		produced int64
	)
	promise := func(r *kgo.Record, err error) {
		switch {
		case err != nil:
			tally.fail(stderr, r.Context.Value(recordNumberKey{}), err)
		case opts.verbose:
			tally.succeeded()
			fmt.Fprintf(stderr, "%s[%d]@%d\n", r.Topic, r.Partition, r.Offset)
		default:
			tally.succeeded()
		}
	}

	reader := bufio.NewReaderSize(cmd.InOrStdin(), 64<<10)
	for lineNo := int64(1); ; lineNo++ {
		line, readErr := reader.ReadBytes('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return fmt.Errorf("read stdin: %w", readErr)
		}
		if len(line) == 0 && readErr != nil {
			break // EOF with no partial line
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		key, value := splitKeyValue(line, opts.keySeparator)
		produced++
		key, value, err = encodeLine(key, value, encodeKey, encodeValue)
		if err != nil {
			// Refused before sending: reported like a failed record.
			tally.fail(stderr, lineNo, err)
			if readErr != nil {
				break
			}
			continue
		}
		r := &kgo.Record{Key: key, Value: value, Headers: headers}
		if opts.partition >= 0 {
			r.Partition = opts.partition
		}
		r.Context = context.WithValue(ctx, recordNumberKey{}, lineNo)
		cl.Produce(ctx, r, promise)
		if readErr != nil {
			break
		}
	}

	// Every record fails by itself once its delivery timeout (--timeout)
	// passes; the flush waits a little longer, so that a slow end is
	// reported with the records' own errors, not as a flush timeout.
	flushCtx, cancel := context.WithTimeout(ctx, conn.timeout+produceFlushGrace)
	defer cancel()
	if err := cl.Flush(flushCtx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	delivered, failed, firstErr := tally.result()
	if opts.verbose {
		fmt.Fprintf(stderr, "%d records produced to %s\n", delivered, topic)
	}
	if failed > 0 {
		if errors.Is(firstErr, kerr.UnknownTopicOrPartition) {
			// Whether the client gave up after its metadata retries or
			// the delivery timeout came first (a slow broker), the cause
			// is the same and is what the user needs to read.
			firstErr = fmt.Errorf("%w (topic %q)", kerr.UnknownTopicOrPartition, topic)
		}
		return fmt.Errorf("%d of %d records failed: %w", failed, produced, firstErr)
	}
	return nil
}

// produceFlushGrace is how long produce's flush waits past the records'
// delivery timeout.
const produceFlushGrace = 5 * time.Second

// maxLoggedProduceErrors caps the per-record error lines on stderr; the
// final error still counts every failure.
const maxLoggedProduceErrors = 10

// recordNumberKey tags each record's context with its input line number,
// so a delivery error can say which line failed.
type recordNumberKey struct{}

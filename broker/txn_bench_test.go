package broker

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkPipeline1KiB: a consume-transform-produce pipeline (franz-go,
// 1 KiB records, 4 input and 4 output partitions, one member) copying the
// same preloaded input at-least-once (produce, flush, then commit the
// group's offsets) and exactly-once (GroupTransactSession: the records and
// the offsets in one transaction), both committing every 100 ms. Each
// iteration runs both, alternating which goes first, so a noisy machine
// hits them alike; it reports each one's records/s and their ratio:
//
//	go test -run '^$' -bench Pipeline1KiB -benchtime 4x ./broker/
func BenchmarkPipeline1KiB(b *testing.B) {
	const records = 100_000
	tb := startTestBroker(b, func(c *Config) { c.GroupInitialRebalanceDelayMs = 0 })
	tb.createTopic("pipe-in", 4, nil)
	ctx := context.Background()
	prod := tb.client(kgo.DefaultProduceTopic("pipe-in"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20))
	value := bytes.Repeat([]byte("v"), 1024)
	for i := range records {
		prod.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := prod.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(2 * records * 1024)
	var alo, eos time.Duration
	var aloCommit, eosCommit commitStats
	for i := 0; i < b.N; i++ {
		modes := []bool{false, true}
		if i%2 == 1 {
			modes = []bool{true, false}
		}
		for _, exactlyOnce := range modes {
			out := fmt.Sprintf("pipe-out-%d-%v", i, exactlyOnce)
			group := "group-" + out
			tb.createTopic(out, 4, nil)
			start := time.Now()
			if exactlyOnce {
				pipelineEOS(b, tb, group, out, records, &eosCommit)
				eos += time.Since(start)
			} else {
				pipelineALO(b, tb, group, out, records, &aloCommit)
				alo += time.Since(start)
			}
		}
	}
	aloRate := float64(records*b.N) / alo.Seconds()
	eosRate := float64(records*b.N) / eos.Seconds()
	b.ReportMetric(aloRate, "alo-records/s")
	b.ReportMetric(eosRate, "eos-records/s")
	b.ReportMetric(eosRate/aloRate, "eos/alo")
	b.ReportMetric(aloCommit.avgMs(), "alo-commit-ms")
	b.ReportMetric(eosCommit.avgMs(), "eos-commit-ms")
}

// commitStats sums the time a pipeline spends committing (flush and
// offsets; or ending the transaction).
type commitStats struct {
	total time.Duration
	n     int
}

func (c *commitStats) add(d time.Duration) { c.total += d; c.n++ }

func (c *commitStats) avgMs() float64 {
	if c.n == 0 {
		return 0
	}
	return float64(c.total.Microseconds()) / 1000 / float64(c.n)
}

const pipelineCommitInterval = 100 * time.Millisecond

func pipelineOpts(tb *testBroker, group, out string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(tb.addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics("pipe-in"), kgo.DefaultProduceTopic(out),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(1 << 20), kgo.FetchMaxBytes(16 << 20), kgo.FetchMaxPartitionBytes(4 << 20),
	}
}

// pipelineALO: poll and produce for a commit interval, flush, commit.
func pipelineALO(b *testing.B, tb *testBroker, group, out string, records int, stats *commitStats) {
	cl, err := kgo.NewClient(append(pipelineOpts(tb, group, out), kgo.DisableAutoCommit())...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	var failed atomic.Value
	done := 0
	for done < records {
		deadline := time.Now().Add(pipelineCommitInterval)
		n := 0
		for time.Now().Before(deadline) && done+n < records {
			pollCtx, cancel := context.WithDeadline(ctx, deadline)
			fs := cl.PollFetches(pollCtx)
			cancel()
			fs.EachRecord(func(r *kgo.Record) {
				cl.Produce(ctx, &kgo.Record{Key: r.Key, Value: r.Value}, func(_ *kgo.Record, err error) {
					if err != nil {
						failed.Store(err)
					}
				})
				n++
			})
		}
		if n == 0 {
			continue
		}
		commitStart := time.Now()
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			b.Fatal(err)
		}
		stats.add(time.Since(commitStart))
		done += n
	}
}

// pipelineEOS: one transaction per commit interval.
func pipelineEOS(b *testing.B, tb *testBroker, group, out string, records int, stats *commitStats) {
	sess, err := kgo.NewGroupTransactSession(append(pipelineOpts(tb, group, out),
		kgo.TransactionalID(group), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RequireStableFetchOffsets())...)
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	ctx := context.Background()
	done := 0
	for done < records {
		// A transaction begins with the first records, as in franz-go's
		// examples: franz-go delays the end of a transaction that
		// committed no offsets by 500 ms (its pre-KIP-447 caution).
		deadline := time.Now().Add(pipelineCommitInterval)
		var batch []*kgo.Record
		for time.Now().Before(deadline) && done+len(batch) < records {
			pollCtx, cancel := context.WithDeadline(ctx, deadline)
			fs := sess.PollFetches(pollCtx)
			cancel()
			if len(batch) == 0 && fs.NumRecords() > 0 {
				if err := sess.Begin(); err != nil {
					b.Fatal(err)
				}
			}
			fs.EachRecord(func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Key: r.Key, Value: r.Value}, nil)
				batch = append(batch, r)
			})
		}
		if len(batch) == 0 {
			continue
		}
		commitStart := time.Now()
		committed, err := sess.End(ctx, kgo.TryCommit)
		if err != nil {
			b.Fatal(err)
		}
		stats.add(time.Since(commitStart))
		if committed {
			done += len(batch)
		}
	}
}

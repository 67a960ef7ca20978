package broker

import (
	"context"
	"crypto/rand"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/miniotest"
)

// BenchmarkTieredConsume compares, in one run, sequential consumption of the
// same bytes from local segments and from remote segments in MinIO on
// loopback with a cold chunk cache (the broker restarts before every
// remote iteration, which empties the cache):
//
//	go test -run '^$' -bench TieredConsume -benchtime 3x ./broker/
//
// Each topic gets benchTieredBytes of 1 KiB records; only the offsets the
// remote topic has wholly in MinIO (below its local log start) are read
// from either topic. BENCH_CHUNK and BENCH_RA override
// remote.log.cache.chunk.size.bytes and remote.log.cache.read.ahead.chunks.
// MinIO runs on the same cores, so on a small machine the remote figure is
// CPU-bound by it (cpu-s/op shows this process's share).
func BenchmarkTieredConsume(b *testing.B) {
	tb, end, bytes := setupTieredBench(b, 256<<20, "local")
	ctx := context.Background()
	p := tb.srv.topics.partition("remote", 0)
	b.Logf("reading offsets [0, %d): %d MiB from each topic", end, bytes>>20)

	consume := func(b *testing.B, topic string) {
		cl := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		defer cl.Close()
		var n int64
		for n < end {
			fs := cl.PollFetches(ctx)
			fs.EachError(func(_ string, _ int32, err error) { b.Fatal(err) })
			fs.EachRecord(func(r *kgo.Record) {
				if r.Offset < end {
					n++
				}
			})
		}
	}
	{
		// The object store alone: ranged GETs of every remote segment, 4
		// at a time, as a ceiling for the remote read.
		b.Run("raw-s3", func(b *testing.B) {
			b.SetBytes(bytes)
			m := p.remote.manifest.Load()
			for range b.N {
				for _, seg := range m.Segments {
					key := segmentKeys(p.remote.prefix, seg)[0]
					var wg sync.WaitGroup
					sem := make(chan struct{}, 4)
					for off := int64(0); off < seg.Size; off += 4 << 20 {
						wg.Add(1)
						sem <- struct{}{}
						go func(off int64) {
							defer wg.Done()
							defer func() { <-sem }()
							r, err := tb.srv.objects.GetRange(ctx, key, off, 4<<20)
							if err != nil {
								b.Error(err)
								return
							}
							io.Copy(io.Discard, r)
							r.Close()
						}(off)
					}
					wg.Wait()
				}
			}
		})
	}
	for _, topic := range []string{"local", "remote"} {
		b.Run(topic, func(b *testing.B) {
			b.SetBytes(bytes)
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				tb.restart() // remote: cold chunk cache
				before := processCPU()
				b.StartTimer()
				consume(b, topic)
				b.StopTimer()
				cpu += processCPU() - before
			}
			// CPU of this process (broker and consumer; MinIO not counted)
			// per byte read, to tell CPU-bound from waiting.
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			// The cache restarts with the broker: this is the last iteration's.
			b.ReportMetric(float64(tb.srv.tiered.cache.Stats().BytesFetched)/(1<<20), "MiB-from-store")
		})
	}
}

// processCPU is the user and system CPU time this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// setupTieredBench starts MinIO and a broker using it, fills the tiered
// topic "remote" (and each of also, untiered) with size bytes of 1 KiB
// records, and waits until every sealed segment of "remote" is in MinIO
// and gone locally. It returns the offset below which "remote" is wholly
// remote, and those segments' bytes.
func setupTieredBench(b *testing.B, size int, also ...string) (tb *testBroker, end, bytes int64) {
	minio := miniotest.New(b)
	minio.SetAWSEnv()
	tb = startTestBroker(b, func(c *Config) {
		c.ObjectStore = minio.StoreURL("bench")
		c.RemoteLogTaskIntervalMs = 50
		c.LogRetentionCheckIntervalMs = 50
		c.FileDeleteDelayMs = 0
		if v := os.Getenv("BENCH_CHUNK"); v != "" {
			c.RemoteLogCacheChunkBytes, _ = strconv.ParseInt(v, 10, 64)
		}
		if v := os.Getenv("BENCH_RA"); v != "" {
			n, _ := strconv.Atoi(v)
			c.RemoteLogCacheReadAheadChunks = int32(n)
		}
	})
	s := func(v string) *string { return &v }
	topics := append([]string{"remote"}, also...)
	for _, topic := range also {
		tb.createTopic(topic, 1, map[string]*string{"segment.bytes": s("16777216")})
	}
	tb.createTopic("remote", 1, map[string]*string{"segment.bytes": s("16777216"), "remote.storage.enable": s("true"), "local.retention.bytes": s("1")})

	ctx := context.Background()
	cl := tb.client(kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(5*time.Millisecond))
	value := make([]byte, 1024)
	for i := 0; i < size/len(value); i++ {
		rand.Read(value[:16])
		for _, topic := range topics {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: append([]byte(nil), value...)}, func(_ *kgo.Record, err error) {
				if err != nil {
					b.Error(err)
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	p := tb.srv.topics.partition("remote", 0)
	waitFor(b, 5*time.Minute, "sealed segments uploaded and deleted locally", func() bool {
		return p.Log().NumSegments() == 1 && p.Log().LogStartOffset() > 0
	})
	return tb, p.Log().LogStartOffset(), p.remote.manifest.Load().Bytes()
}

// BenchmarkTieredHotLatency measures the produce-to-consume latency of a
// hot partition (one 100-byte record per op, acks=1, a consumer waiting at
// the end) while idle, while another consumer backfills a local partition,
// and while it backfills a remote partition from MinIO with a cache too
// small to hold it (so every pass reads the store); p50 and p99 of each in
// one run:
//
//	go test -run '^$' -bench TieredHotLatency -benchtime 2000x ./broker/
func BenchmarkTieredHotLatency(b *testing.B) {
	tb, end, _ := setupTieredBench(b, 64<<20, "local")
	tb.srv.Close()
	tb.srv = nil
	tb.cfg.RemoteLogCacheBytes = 16 << 20
	tb.start()
	tb.createTopic("hot", 1, nil)
	ctx := context.Background()
	producer := tb.client(kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	// From the start of the new, empty topic, so no record is ever missed.
	consumer := tb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"hot": {0: kgo.NewOffset().AtStart()}}), kgo.FetchMaxWait(time.Second))
	// Warm both clients up.
	producer.ProduceSync(ctx, &kgo.Record{Topic: "hot", Value: []byte("warm")})
	for consumer.PollFetches(ctx).NumRecords() == 0 {
	}

	run := func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		value := make([]byte, 100)
		for range b.N {
			start := time.Now()
			if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "hot", Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
			for got := 0; got == 0; {
				fs := consumer.PollFetches(ctx)
				fs.EachError(func(_ string, _ int32, err error) { b.Fatal(err) })
				got = fs.NumRecords()
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	}
	b.Run("idle", run)

	// A consumer reading topic from the start over and over, until stopped.
	backfill := func(topic string) (stop func() int64) {
		backfillCtx, cancel := context.WithCancel(ctx)
		var read atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for backfillCtx.Err() == nil {
				cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
				if err != nil {
					return
				}
				for n := int64(0); n < end && backfillCtx.Err() == nil; {
					fs := cl.PollFetches(backfillCtx)
					n += int64(fs.NumRecords())
					read.Add(int64(fs.NumRecords()))
				}
				cl.Close()
			}
		}()
		waitFor(b, time.Minute, "the backfill to start reading", func() bool { return read.Load() > 0 })
		return func() int64 {
			cancel()
			<-done
			return read.Load()
		}
	}
	// The same load from local segments, to tell the cost of the remote
	// read path from that of sharing two cores with any backfill.
	stop := backfill("local")
	b.Run("during-local-backfill", run)
	b.Logf("local backfill read %d records", stop())
	stop = backfill("remote")
	b.Run("during-remote-backfill", run)
	b.Logf("remote backfill read %d records (%d MiB from the store)", stop(), tb.srv.tiered.cache.Stats().BytesFetched>>20)
}

package broker

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"io"
	"os"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-streaming/strata/tiering"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduceIceberg produces 1 KiB records (incompressible, franz-go's
// default snappy) to a plain topic and to iceberg.enabled ones (commits
// every 100 ms) on the same broker, in rounds (3, or STRATA_BENCH_ROUNDS)
// of three cases side by side: plain, iceberg (the writer paced by the
// default iceberg.writer.cpu.min.fraction) and iceberg-unpaced (the
// fraction set to 1 as a dynamic broker config: the writer as it was
// before it had a budget). After an iceberg case the timer stops until
// the table holds every record: catchup-s is that wait, the time the
// writer needs to catch up once the producer is done, and paused-s the
// time it paused, case and catch-up. cpu-s and gc-cpu-s are the process's
// CPU time in the case, in all and in the collector, heap-B/record what
// it allocated per record. The output ends with each iceberg case's
// records/s against the same round's plain case. Run with -benchtime of a million
// records or so, so that the cases last seconds and commits happen during
// the iceberg cases.
//
// The log is on tmpfs (/dev/shm) when the machine has one, and the object
// store keeps the tables' metadata in memory but reads and drops the data
// files' bytes, as an upload to a remote bucket would: produce is then
// bound by the CPU alone, the worst case for what the writer takes from
// it. On a disk, the gigabytes each case writes outrun the disk and the
// kernel's writeback throttling decides the figures; on tmpfs with the
// data files kept, the gigabytes of Parquet fill the memory and every
// write pays for reclaim (produce fell to a third from the second round
// on, plain cases included). STRATA_BENCH_DISK=1 puts the log in the
// test's temporary directory.
func BenchmarkProduceIceberg(b *testing.B) {
	dir := benchDir(b)
	tb := startTestBroker(b, func(c *Config) {
		c.DataDir = dir
		c.objectStore = discardDataStore{tiering.NewMemStore()}
		c.LogRetentionCheckIntervalMs = 1000
	})
	// Retention keeps the logs small across the rounds (not below what the
	// writer has yet to read: about a case's records).
	tb.createTopicWithPartitions("bench-plain", 2, map[string]string{"retention.bytes": strconv.Itoa(64 << 20), "segment.bytes": strconv.Itoa(32 << 20)})
	// Every iceberg case produces to a topic (and table) of its own,
	// deleted after it: a table that grew over the run (hundreds of
	// commits, a file each) would make the later cases' commits dearer
	// than the first's. No compaction: it would run in whichever case its
	// files pile up in, and blur what each case costs.
	icebergTopics := 0
	newIcebergTopic := func() string {
		icebergTopics++
		name := fmt.Sprintf("bench-iceberg-%d", icebergTopics)
		tb.createTopicWithPartitions(name, 2, map[string]string{icebergEnabledConfig: "true", icebergIntervalConfig: "100",
			icebergCompactionMinConfig: "0", "retention.bytes": strconv.Itoa(1 << 30), "segment.bytes": strconv.Itoa(32 << 20)})
		return name
	}
	// Incompressible: 4,096 different random values in turn, 4 MiB, so
	// that franz-go's snappy (its default, kept) finds no repeat in a
	// batch either.
	values := make([][]byte, 4096)
	for i := range values {
		values[i] = make([]byte, 1024)
		crand.Read(values[i])
	}
	adm := kadm.NewClient(tb.client())
	setFraction := func(b *testing.B, v string) {
		ctx := context.Background()
		op := kadm.AlterConfig{Op: kadm.DeleteConfig, Name: icebergWriterCPUMinFractionConfig}
		if v != "" {
			op = kadm.AlterConfig{Op: kadm.SetConfig, Name: icebergWriterCPUMinFractionConfig, Value: &v}
		}
		if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{op}, tb.srv.cfg.NodeID); err != nil {
			b.Fatal(err)
		}
		want := icebergDefaultWriterCPUMinFraction
		if v != "" {
			want, _ = strconv.ParseFloat(v, 64)
		}
		for tb.srv.conf().IcebergWriterCPUMinFraction != want {
			time.Sleep(10 * time.Millisecond)
		}
	}
	cases := []struct{ name, fraction string }{
		{"plain", ""},
		{"iceberg", ""},
		{"iceberg-unpaced", "1"},
	}
	// rates[case] are the records/s of each round's run (not the
	// testing package's first run of one record).
	rates := map[string][]float64{}
	for range benchRounds(b, 3) {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				setFraction(b, c.fraction)
				topic := "bench-plain"
				if c.name != "plain" {
					topic = newIcebergTopic()
				}
				cl := tb.client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
					kgo.ProducerLinger(5e6), kgo.ProducerBatchMaxBytes(1<<20))
				ctx := context.Background()
				if err := cl.ProduceSync(ctx, &kgo.Record{Value: values[0]}).FirstErr(); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(values[0])))
				cpuBefore := benchCPU()
				b.ResetTimer()
				var wg sync.WaitGroup
				wg.Add(b.N)
				for i := range b.N {
					cl.Produce(ctx, &kgo.Record{Value: values[i%len(values)]}, func(_ *kgo.Record, err error) {
						if err != nil {
							b.Error(err)
						}
						wg.Done()
					})
				}
				wg.Wait()
				b.StopTimer()
				cpu := benchCPU()
				rate := float64(b.N) / b.Elapsed().Seconds()
				b.ReportMetric(rate, "records/s")
				b.ReportMetric(cpu.gc-cpuBefore.gc, "gc-cpu-s")
				b.ReportMetric(cpu.total-cpuBefore.total, "cpu-s")
				b.ReportMetric((cpu.allocs-cpuBefore.allocs)/float64(b.N), "heap-B/record")
				if b.N > 1 {
					rates[c.name] = append(rates[c.name], rate)
				}
				if topic == "bench-plain" {
					return
				}
				start := time.Now()
				waitIcebergCaughtUp(b, tb, topic)
				b.ReportMetric(time.Since(start).Seconds(), "catchup-s")
				b.ReportMetric(icebergPausedSeconds(tb, topic), "paused-s")
				if _, err := adm.DeleteTopics(ctx, topic); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
	// Printed: the testing package shows a parent benchmark's log only
	// with -test.v.
	for _, c := range cases[1:] {
		fmt.Printf("BenchmarkProduceIceberg: records/s of %s / plain: %s\n", c.name, benchRatios(rates[c.name], rates["plain"]))
	}
	setFraction(b, "")
}

// benchRounds is STRATA_BENCH_ROUNDS, or def.
func benchRounds(b *testing.B, def int) int {
	if v := os.Getenv("STRATA_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("STRATA_BENCH_ROUNDS=%q: want a positive count", v)
		}
		return n
	}
	return def
}

// benchRatios describes rates against base, round by round: each round's
// ratio, their median, and the ratio of the sums.
func benchRatios(rates, base []float64) string {
	n := min(len(rates), len(base))
	if n == 0 {
		return "no rounds"
	}
	ratios := make([]float64, n)
	var sum, sumBase float64
	for i := range n {
		ratios[i] = rates[i] / base[i]
		sum += rates[i]
		sumBase += base[i]
	}
	sorted := slices.Clone(ratios)
	slices.Sort(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return fmt.Sprintf("rounds %.2f, median %.3f, sums %.3f", ratios, median, sum/sumBase)
}

// benchCPUTimes are the process's CPU seconds so far, in all and in the
// collector (runtime/metrics, which counts both from the scheduler's
// view: estimates, good for comparing cases).
type benchCPUTimes struct{ total, gc, allocs float64 }

func benchCPU() benchCPUTimes {
	ms := []rtmetrics.Sample{{Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/idle:cpu-seconds"},
		{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(ms)
	return benchCPUTimes{total: ms[0].Value.Float64() - ms[2].Value.Float64(), gc: ms[1].Value.Float64(), allocs: float64(ms[3].Value.Uint64())}
}

// discardDataStore is an object store for benchmarks that reads the
// Parquet data files put into it and keeps them empty; everything else
// (metadata, manifests) it keeps.
type discardDataStore struct{ *tiering.MemStore }

func (s discardDataStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if strings.HasSuffix(key, ".parquet") {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return err
		}
		r, size = strings.NewReader(""), 0
	}
	return s.MemStore.Put(ctx, key, r, size)
}

// benchDir is a directory for a benchmark's log: on tmpfs
// (/dev/shm) when there is one, unless STRATA_BENCH_DISK is set.
func benchDir(b *testing.B) string {
	if os.Getenv("STRATA_BENCH_DISK") == "" {
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			dir, err := os.MkdirTemp("/dev/shm", "strata-bench-")
			if err == nil {
				b.Cleanup(func() { os.RemoveAll(dir) })
				return dir
			}
		}
	}
	return b.TempDir()
}

// icebergPausedSeconds is the time the writer paused in topic's commits.
func icebergPausedSeconds(tb *testBroker, topic string) float64 {
	for _, st := range tb.srv.iceberg.statuses() {
		if st.Topic == topic {
			return st.WriterPausedSeconds
		}
	}
	return 0
}

// waitIcebergCaughtUp waits until topic's table holds every record of its
// partitions' logs.
func waitIcebergCaughtUp(b *testing.B, tb *testBroker, topic string) {
	b.Helper()
	t := tb.srv.topics.get(topic)
	parts, _, _ := tb.srv.topics.snapshot(t)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		behind := false
		next := map[int32]int64{}
		for _, st := range tb.srv.iceberg.statuses() {
			if st.Topic == topic {
				for _, ps := range st.Partitions {
					next[ps.Partition] = ps.TableNextOffset
				}
			}
		}
		for _, p := range parts {
			if next[p.index] < p.Log().LogEndOffset() {
				behind = true
			}
		}
		if !behind {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the table of %s did not catch up in 10 minutes", topic)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

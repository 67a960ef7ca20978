package broker

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/broker/acl"
	"github.com/strata-streaming/strata/metadata/cluster"
)

// Broker-level benchmarks over loopback with a franz-go client: the whole
// produce path (frame, decode, validate, append) and fetch path (read,
// encode, sendfile). Compare runs with benchstat:
//
//	go test -run '^$' -bench 'BenchmarkBroker' -count 6 ./broker/ | tee new.txt

func BenchmarkBrokerProduce1KiB(b *testing.B) {
	tb := startTestBroker(b)
	cl := tb.client(kgo.DefaultProduceTopic("bench"), kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(1<<20))
	ctx := context.Background()
	value := bytes.Repeat([]byte("x"), 1024)
	// Create the topic before timing.
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	var wg sync.WaitGroup
	wg.Add(b.N)
	for i := 0; i < b.N; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
}

func BenchmarkBrokerFetch1KiB(b *testing.B) {
	tb := startTestBroker(b)
	ctx := context.Background()
	prod := tb.client(kgo.DefaultProduceTopic("bench"), kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20))
	value := bytes.Repeat([]byte("y"), 1024)
	var wg sync.WaitGroup
	wg.Add(b.N)
	for i := 0; i < b.N; i++ {
		prod.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	cons := tb.client(kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
	got := 0
	for got < b.N {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		got += fs.NumRecords()
	}
}

// randomValue is an incompressible payload.
func randomValue(b testing.TB, n int) []byte {
	v := make([]byte, n)
	if _, err := rand.Read(v); err != nil {
		b.Fatal(err)
	}
	return v
}

// fillTopic writes n incompressible records of size bytes, uncompressed.
func fillTopic(b *testing.B, cl *kgo.Client, topic string, n, size int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(n)
	for range n {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: randomValue(b, size)}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
}

// consumeBench reads n records of topic from the start with a new client.
func consumeBench(b *testing.B, tb *testBroker, addr, topic string, n int, opts ...kgo.Opt) {
	cons, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64 << 20), kgo.FetchMaxPartitionBytes(16 << 20)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	ctx := context.Background()
	for got := 0; got < n; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		got += fs.NumRecords()
	}
}

// BenchmarkBrokerFetchTLS consumes 16 MiB of incompressible 1 KiB
// records, stored uncompressed, over a PLAINTEXT listener (sendfile) and
// an SSL one (TLS 1.3) of the same broker, side by side:
//
//	go test -run '^$' -bench BenchmarkBrokerFetchTLS -count 4 ./broker/
func BenchmarkBrokerFetchTLS(b *testing.B) {
	f := newTLSFixture(b)
	tb := startTestBroker(b, func(c *Config) {
		mustSet(b, c, "listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "ssl.keystore.location", f.server.Keystore)
	})
	const records, size = 16 << 10, 1 << 10
	prod := tb.client(kgo.AllowAutoTopicCreation(), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1<<20))
	fillTopic(b, prod, "bench-tls", records, size)
	for _, c := range []struct {
		name     string
		listener string
		opts     []kgo.Opt
	}{
		{"plaintext", "PLAINTEXT", nil},
		{"tls", "SSL", []kgo.Opt{kgo.DialTLSConfig(f.clientTLS(b, false))}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(records * size)
			for b.Loop() {
				consumeBench(b, tb, tb.srv.ListenerAddr(c.listener), "bench-tls", records, c.opts...)
			}
		})
	}
}

// BenchmarkAuthorizerCost measures what ACL checks add to produce and
// fetch: the same broker workload with authorizer.class.name unset and
// set with 1,000 ACLs (the client's two among them), side by side.
// Payloads are incompressible 1 KiB records, uncompressed.
//
//	go test -run '^$' -bench BenchmarkAuthorizerCost -count 4 ./broker/
func BenchmarkAuthorizerCost(b *testing.B) {
	for _, authz := range []bool{false, true} {
		name := "off"
		if authz {
			name = "on"
		}
		tb := startTestBroker(b, func(c *Config) {
			if authz {
				mustSet(b, c, "authorizer.class.name", "strata")
			}
		})
		if authz {
			var rec cluster.CreateACLs
			for i := range 998 {
				rec.Bindings = append(rec.Bindings, acl.Binding{ResourceType: int8(acl.ResourceTopic), ResourceName: fmt.Sprintf("other-%d", i),
					PatternType: int8(acl.PatternLiteral), Principal: "User:someone", Host: "*", Operation: int8(acl.OpRead), Permission: int8(acl.PermissionAllow)})
			}
			for _, op := range []acl.Operation{acl.OpAll, acl.OpCreate} {
				rec.Bindings = append(rec.Bindings, acl.Binding{ResourceType: int8(acl.ResourceTopic), ResourceName: "bench-",
					PatternType: int8(acl.PatternPrefixed), Principal: anonymousPrincipal, Host: "*", Operation: int8(op), Permission: int8(acl.PermissionAllow)})
			}
			if _, err := tb.srv.meta.propose(context.Background(), rec); err != nil {
				b.Fatal(err)
			}
		}
		benchProduceAndFetch(b, tb, name)
	}
}

// benchProduceAndFetch runs the produce/NAME and fetch/NAME benchmarks of
// 1 KiB incompressible records, uncompressed, against tb.
func benchProduceAndFetch(b *testing.B, tb *testBroker, name string) {
	opts := []kgo.Opt{kgo.AllowAutoTopicCreation(), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0), kgo.ProducerBatchMaxBytes(1 << 20)}
	b.Run("produce/"+name, func(b *testing.B) {
		cl := tb.client(opts...)
		value := randomValue(b, 1<<10)
		fillTopic(b, cl, "bench-produce", 1, 1<<10) // create the topic before timing
		b.SetBytes(int64(len(value)))
		ctx := context.Background()
		var wg sync.WaitGroup
		wg.Add(b.N)
		b.ResetTimer()
		for range b.N {
			cl.Produce(ctx, &kgo.Record{Topic: "bench-produce", Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					b.Error(err)
				}
				wg.Done()
			})
		}
		wg.Wait()
	})
	const records = 4 << 10
	fillTopic(b, tb.client(opts...), "bench-fetch", records, 1<<10) // once: b.Run calls its function for each b.N
	b.Run("fetch/"+name, func(b *testing.B) {
		b.SetBytes(records << 10)
		for b.Loop() {
			consumeBench(b, tb, tb.addr(), "bench-fetch", records)
		}
	})
}

// BenchmarkQuotaCost is produce and fetch with and without client quotas
// that apply but never throttle (producer and consumer byte rates and a
// request percentage on the default client id), so the difference is the
// cost of measuring.
//
//	go test -run '^$' -bench BenchmarkQuotaCost -count 4 ./broker/
func BenchmarkQuotaCost(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		tb := startTestBroker(b)
		if on {
			name = "on"
			def := ""
			rec := cluster.AlterClientQuotas{Alterations: []cluster.QuotaAlteration{{Entity: cluster.QuotaEntity{ClientID: &def},
				Set: map[string]float64{"producer_byte_rate": 1 << 40, "consumer_byte_rate": 1 << 40, "request_percentage": 1e9}}}}
			if _, err := tb.srv.meta.propose(context.Background(), rec); err != nil {
				b.Fatal(err)
			}
		}
		benchProduceAndFetch(b, tb, name)
	}
}

// BenchmarkProduceManyPartitions produces the same 16 KiB batches (16
// incompressible 1 KiB records, uncompressed, acks=1) to a topic of 10
// partitions and to one of 10,000 on one node: every request carries 10
// batches for 10 consecutive partitions, 8 requests in flight, so only
// how many partitions the bytes spread over differs. The two alternate in
// slices of 8 MiB (one op is a slice of each), so a busy machine slows
// both alike; each slice of the 10,000 goes on where the last one stopped,
// so every partition is written. Reported: MB/s of each and their ratio
// (issue 18 asks for at least 0.7); at the default 1 s a run is a dozen
// slices and the ratio swings on a shared VM, 5 s steadies it:
//
//	go test -run '^$' -bench BenchmarkProduceManyPartitions -benchtime 5s -count 3 ./broker/
//
// Creating the 10,000 partitions takes from half a minute to a few minutes
// on a busy VM (file system work), once: the measurement is a
// sub-benchmark, which -count repeats, of one setup.
func BenchmarkProduceManyPartitions(b *testing.B) {
	const (
		recordsPerBatch   = 16
		recordSize        = 1024
		batchSize         = recordsPerBatch * recordSize
		batchesPerRequest = 10
		requestsPerSlice  = 50 // 500 batches, 8 MiB
		inFlight          = 8
	)
	tb := startTestBroker(b)
	cl := tb.client(kgo.RequestTimeoutOverhead(2 * time.Minute))
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(120_000)
	ctx := context.Background()
	type shape struct {
		partitions int64
		topic      string
		id         [16]byte
		next       int64 // the next request's first partition, mod partitions
		elapsed    time.Duration
	}
	shapes := []*shape{{partitions: 10}, {partitions: 10_000}}
	for _, sh := range shapes {
		sh.topic = fmt.Sprint("scale", sh.partitions)
		res, err := adm.CreateTopic(ctx, int32(sh.partitions), 1, nil, sh.topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			b.Fatalf("creating %d partitions: %v", sh.partitions, err)
		}
		sh.id = res.ID
	}
	records := make([]testRecord, recordsPerBatch)
	for i := range records {
		records[i] = testRecord{value: randomValue(b, recordSize), timestamp: time.Now().UnixMilli()}
	}
	// Without a producer id the same bytes are a valid batch for every
	// partition: the broker assigns the offsets.
	batch := buildBatch(b, plainBatch(records...))
	request := func(sh *shape, first int64) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Acks = 1
		req.TimeoutMillis = 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = sh.topic, sh.id
		for i := range int64(batchesPerRequest) {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = int32((first + i) % sh.partitions)
			rp.Records = batch
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		return req
	}
	// slice produces requestsPerSlice requests to sh and adds the time.
	slice := func(sh *shape) error {
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, inFlight)
		for range inFlight {
			wg.Go(func() {
				for {
					r := next.Add(1) - 1
					if r >= requestsPerSlice {
						return
					}
					resp, err := request(sh, sh.next+r*batchesPerRequest).RequestWith(ctx, cl)
					if err == nil {
						for _, p := range resp.Topics[0].Partitions {
							if err = kerr.ErrorForCode(p.ErrorCode); err != nil {
								break
							}
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		sh.next = (sh.next + requestsPerSlice*batchesPerRequest) % sh.partitions
		sh.elapsed += time.Since(start)
		return <-errs
	}
	for _, sh := range shapes { // warming up
		if err := slice(sh); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("10-vs-10000", func(b *testing.B) {
		b.SetBytes(int64(len(shapes)) * requestsPerSlice * batchesPerRequest * batchSize)
		for _, sh := range shapes {
			sh.elapsed = 0
		}
		for range b.N {
			for _, sh := range shapes {
				if err := slice(sh); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		mbps := func(sh *shape) float64 {
			return float64(b.N) * requestsPerSlice * batchesPerRequest * batchSize / 1e6 / sh.elapsed.Seconds()
		}
		b.ReportMetric(mbps(shapes[0]), "MB/s@10")
		b.ReportMetric(mbps(shapes[1]), "MB/s@10000")
		b.ReportMetric(mbps(shapes[1])/mbps(shapes[0]), "ratio")
	})
}

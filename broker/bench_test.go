package broker

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

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

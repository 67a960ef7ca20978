package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

func alterQuota(t *testing.T, adm *kadm.Client, entity kadm.ClientQuotaEntity, ops ...kadm.AlterClientQuotaOp) {
	t.Helper()
	res, err := adm.AlterClientQuotas(testContext(t), []kadm.AlterClientQuotaEntry{{Entity: entity, Ops: ops}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("alter quota %v: %v %+v", entity, err, res)
	}
}

// TestClientQuotaAPIs: KIP-546's APIs through kadm and sarama: set,
// describe with exact, default and any filters (strict and not), remove;
// bad entries refused one by one with INVALID_REQUEST; validate_only
// commits nothing.
func TestClientQuotaAPIs(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	adm := kadm.NewClient(tb.client())
	alice, app := "alice", "app"
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: &alice}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: 1024})
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user", Name: &alice}, {Type: "client-id", Name: &app}}, kadm.AlterClientQuotaOp{Key: "consumer_byte_rate", Value: 2048})
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "user"}}, kadm.AlterClientQuotaOp{Key: "request_percentage", Value: 50})
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id"}}, kadm.AlterClientQuotaOp{Key: "controller_mutation_rate", Value: 10})

	describe := func(strict bool, comps ...kadm.DescribeClientQuotaComponent) []string {
		t.Helper()
		got, err := adm.DescribeClientQuotas(ctx, strict, comps)
		if err != nil {
			t.Fatalf("describe %+v: %v", comps, err)
		}
		var out []string
		for _, q := range got {
			s := ""
			for _, e := range q.Entity {
				s += e.String() + ","
			}
			for _, v := range q.Values {
				s += v.String()
			}
			out = append(out, s)
		}
		return out
	}
	if got := describe(false, kadm.DescribeClientQuotaComponent{Type: "user", MatchName: &alice, MatchType: 0}); len(got) != 2 {
		t.Fatalf("user=alice: %v, want alice and alice/app", got)
	}
	if got := describe(true, kadm.DescribeClientQuotaComponent{Type: "user", MatchName: &alice, MatchType: 0}); len(got) != 1 || got[0] != "user=alice,producer_byte_rate=1024.000000" {
		t.Fatalf("strict user=alice: %v", got)
	}
	if got := describe(false, kadm.DescribeClientQuotaComponent{Type: "user", MatchType: 1}); len(got) != 1 || got[0] != "user=<default>,request_percentage=50.000000" {
		t.Fatalf("default user: %v", got)
	}
	if got := describe(false, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchType: 2}); len(got) != 2 {
		t.Fatalf("any client-id: %v, want alice/app and the default client", got)
	}
	if got := describe(false); len(got) != 4 {
		t.Fatalf("no filter: %v", got)
	}

	// sarama's encoders agree.
	sa, err := sarama.NewClusterAdmin([]string{tb.addr()}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	entries, err := sa.DescribeClientQuotas([]sarama.QuotaFilterComponent{{EntityType: sarama.QuotaEntityClientID, MatchType: sarama.QuotaMatchExact, Match: "app"}}, false)
	if err != nil || len(entries) != 1 || entries[0].Values["consumer_byte_rate"] != 2048 {
		t.Fatalf("sarama describe client-id=app: %v %+v", err, entries)
	}
	if err := sa.AlterClientQuotas([]sarama.QuotaEntityComponent{{EntityType: sarama.QuotaEntityUser, MatchType: sarama.QuotaMatchExact, Name: "alice"}},
		sarama.ClientQuotasOp{Key: "producer_byte_rate", Remove: true}, false); err != nil {
		t.Fatalf("sarama remove: %v", err)
	}
	if got := describe(true, kadm.DescribeClientQuotaComponent{Type: "user", MatchName: &alice, MatchType: 0}); len(got) != 0 {
		t.Fatalf("after removing alice's only quota: %v", got)
	}

	// Refusals, one entry at a time; the valid entry of the same request
	// is applied.
	bob, empty := "bob", ""
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &bob}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 100}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &bob}}, Ops: []kadm.AlterClientQuotaOp{{Key: "no_such_quota", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &app}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1.5}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &app}}, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: -1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "ip", Name: &bob}}, Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &empty}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}}},
		{Entity: kadm.ClientQuotaEntity{{Type: "group", Name: &bob}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1}}},
	})
	if err != nil || len(res) != 7 {
		t.Fatalf("alter: %v %+v", err, res)
	}
	for i, r := range res {
		if want := i > 0; want != errors.Is(r.Err, kerr.InvalidRequest) {
			t.Errorf("entry %d: %v (%s)", i, r.Err, r.ErrMessage)
		}
	}
	if got := describe(true, kadm.DescribeClientQuotaComponent{Type: "user", MatchName: &bob, MatchType: 0}); len(got) != 1 {
		t.Fatalf("bob's valid entry: %v", got)
	}
	if _, err := adm.ValidateAlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "user", Name: &bob}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Remove: true}}}}); err != nil {
		t.Fatal(err)
	}
	if got := describe(true, kadm.DescribeClientQuotaComponent{Type: "user", MatchName: &bob, MatchType: 0}); len(got) != 1 {
		t.Fatalf("validate_only removed bob's quota: %v", got)
	}
	if _, err := adm.DescribeClientQuotas(ctx, false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: 0}}); !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("exact match without a name: %v", err)
	}
	// Quotas survive a restart (they are quorum records).
	tb.restart()
	adm = kadm.NewClient(tb.client())
	if got := describe(false); len(got) != 4 {
		t.Fatalf("after restart: %v", got)
	}
}

// producedRate runs a producer with client id id on topic until stop and
// counts the value bytes acknowledged after warm (the first window's burst
// is allowed).
func producedRate(t *testing.T, addr, id, topic string, warm time.Time, stop <-chan struct{}, acked *atomic.Int64) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(id), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10), kgo.MaxBufferedRecords(64))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	value := make([]byte, 1024)
	_, _ = rand.Read(value) // incompressible, and sent uncompressed
	for {
		select {
		case <-stop:
			cl.Flush(context.Background())
			return
		default:
		}
		cl.Produce(context.Background(), &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			if err == nil && time.Now().After(warm) {
				acked.Add(int64(len(r.Value)))
			}
		})
	}
}

// TestProducerByteRateThrottles: with producer_byte_rate on client id
// "slow", a producer under that id is held within 20% of the quota while
// an unthrottled one on the same node keeps producing several times
// faster; throttle time shows in the metrics by client id.
func TestProducerByteRateThrottles(t *testing.T) {
	tb := startTestBroker(t)
	adm := kadm.NewClient(tb.client())
	const bound = 256 << 10
	slow := "slow"
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: &slow}}, kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: bound})
	if _, err := adm.CreateTopics(testContext(t), 1, 1, nil, "q-slow", "q-fast"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	warm, measure := start.Add(2*time.Second), 4*time.Second
	stop := make(chan struct{})
	var slowBytes, fastBytes atomic.Int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); producedRate(t, tb.addr(), "slow", "q-slow", warm, stop, &slowBytes) }()
	go func() { defer wg.Done(); producedRate(t, tb.addr(), "fast", "q-fast", warm, stop, &fastBytes) }()
	time.Sleep(time.Until(warm.Add(measure))) // the measured interval
	close(stop)
	wg.Wait()
	slowRate := float64(slowBytes.Load()) / measure.Seconds()
	fastRate := float64(fastBytes.Load()) / measure.Seconds()
	t.Logf("slow %.0f B/s against a %d B/s quota; fast %.0f B/s", slowRate, bound, fastRate)
	// The quota counts request bytes, a little over the values.
	if slowRate < 0.8*bound || slowRate > 1.2*bound {
		t.Fatalf("the throttled producer ran at %.0f B/s, want within 20%% of %d", slowRate, bound)
	}
	if fastRate < 3*bound {
		t.Fatalf("the unthrottled producer ran at %.0f B/s only", fastRate)
	}
	if got := testutil.ToFloat64(tb.srv.metrics.quotaThrottle.WithLabelValues("producer_byte_rate", "", "slow")); got <= 0 {
		t.Fatal("no throttle time counted for client id slow")
	}
	if got := testutil.ToFloat64(tb.srv.metrics.quotaThrottle.WithLabelValues("producer_byte_rate", "", "fast")); got != 0 {
		t.Fatalf("%v s of throttle counted for the unthrottled client", got)
	}
}

// TestConsumerByteRateAndMutationQuotas: consumer_byte_rate slows a
// consumer of the default user; controller_mutation_rate refuses a second
// CreateTopics with THROTTLING_QUOTA_EXCEEDED once the first used it up.
func TestConsumerByteRateAndMutationQuotas(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	adm := kadm.NewClient(tb.client(kgo.ClientID("admin")))
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, "q-consume"); err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 1024)
	_, _ = rand.Read(value)
	// Small batches: a fetch returns at least one whole batch.
	p := tb.client(kgo.DefaultProduceTopic("q-consume"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(16<<10))
	const total = 1536
	for i := 0; i < total; i++ {
		p.Produce(ctx, &kgo.Record{Value: value}, nil)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	const bound = 512 << 10
	reader := "reader"
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: &reader}}, kadm.AlterClientQuotaOp{Key: "consumer_byte_rate", Value: bound})
	c := tb.client(kgo.ClientID("reader"), kgo.ConsumeTopics("q-consume"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<10), kgo.FetchMaxPartitionBytes(64<<10))
	began := time.Now()
	n := 0
	for n < total {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		n += fs.NumRecords()
	}
	took := time.Since(began)
	// 1.5 MiB at 512 KiB/s, one window's burst allowed: about 2 s.
	if want := time.Duration(float64(total*1024-bound)/bound*float64(time.Second)) * 8 / 10; took < want {
		t.Fatalf("consumed %d KiB in %v under a %d B/s quota, want at least %v", total, took, bound, want)
	}
	if took > 3*time.Duration(total*1024/bound)*time.Second {
		t.Fatalf("consumed %d KiB in %v: throttled far below the quota", total, took)
	}
	t.Logf("consumed %d KiB in %v under a 512 KiB/s quota", total, took.Round(time.Millisecond))

	admin := "admin"
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: &admin}}, kadm.AlterClientQuotaOp{Key: "controller_mutation_rate", Value: 5})
	if _, err := adm.CreateTopics(ctx, 10, 1, nil, "q-many"); err != nil {
		t.Fatalf("a first request under the quota: %v", err)
	}
	res, err := adm.CreateTopics(ctx, 1, 1, nil, "q-more")
	if err != nil || !errors.Is(res["q-more"].Err, kerr.ThrottlingQuotaExceeded) {
		t.Fatalf("a second request over the quota: %v %+v", err, res)
	}
}

// TestRequestPercentageThrottles: with a tiny request_percentage on client
// id "busy", its Metadata requests are answered with a throttle time once
// their handling time passes the quota, and another client's are not.
func TestRequestPercentageThrottles(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	adm := kadm.NewClient(tb.client())
	busy := "busy"
	alterQuota(t, adm, kadm.ClientQuotaEntity{{Type: "client-id", Name: &busy}}, kadm.AlterClientQuotaOp{Key: "request_percentage", Value: 0.001})
	throttledAfter := func(id string) (int32, int) {
		cl := tb.client(kgo.ClientID(id))
		for i := 1; i <= 2000; i++ {
			r, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			if r.ThrottleMillis > 0 {
				return r.ThrottleMillis, i
			}
		}
		return 0, 2000
	}
	if ms, n := throttledAfter("busy"); ms <= 0 {
		t.Fatalf("%d Metadata requests under a 0.001%% request quota never throttled", n)
	} else {
		t.Logf("throttled %d ms after %d requests", ms, n)
	}
	if ms, _ := throttledAfter("idle"); ms != 0 {
		t.Fatalf("a client without a quota was throttled %d ms", ms)
	}
}

// TestClientQuotaAPIsAuthorize: with an authorizer, describing quotas
// needs DESCRIBE_CONFIGS on the cluster and altering them ALTER_CONFIGS;
// a user with neither is refused both, and granted DESCRIBE_CONFIGS may
// describe but still not alter.
func TestClientQuotaAPIsAuthorize(t *testing.T) {
	tb, _ := startSASLBroker(t, func(c *Config) { mustSet(t, c, "authorizer.class.name", "strata", "super.users", "User:admin") })
	ctx := testContext(t)
	addr := tb.srv.ListenerAddr("SASL_PLAINTEXT")
	admin := kadm.NewClient(saslClient(t, addr, kgo.SASL(plain.Auth{User: "admin", Pass: "admin-secret"}.AsMechanism())))
	carol := kadm.NewClient(saslClient(t, addr, kgo.SASL(plain.Auth{User: "carol", Pass: "carol-secret"}.AsMechanism())))
	name := "x"
	entry := []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: &name}}, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1e6}}}}
	if _, err := carol.DescribeClientQuotas(ctx, false, nil); !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol describes quotas: %v", err)
	}
	if res, err := carol.AlterClientQuotas(ctx, entry); err != nil || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol alters quotas: %v %+v", err, res)
	}
	if res, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:carol").AllowHosts("*").Clusters().Operations(kadm.OpDescribeConfigs)); err != nil || res[0].Err != nil {
		t.Fatalf("grant: %v %+v", err, res)
	}
	if _, err := carol.DescribeClientQuotas(ctx, false, nil); err != nil {
		t.Fatalf("carol with DESCRIBE_CONFIGS describes quotas: %v", err)
	}
	if res, err := carol.AlterClientQuotas(ctx, entry); err != nil || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("carol with DESCRIBE_CONFIGS alters quotas: %v %+v", err, res)
	}
	if res, err := admin.AlterClientQuotas(ctx, entry); err != nil || res[0].Err != nil {
		t.Fatalf("the super user alters quotas: %v %+v", err, res)
	}
}

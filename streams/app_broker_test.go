package streams_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
)

// TestRepartitionOverBroker: a regex source over two topics, re-keyed and
// repartitioned through the App's internal topic, exactly-once. Every
// record arrives once and each user's records share a partition.
func TestRepartitionOverBroker(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "ev-web", 3)
	createTopic(t, b.Addr, "ev-app", 3)
	createTopic(t, b.Addr, "per-user", 4)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 600
	for i := 0; i < n; i++ {
		topic := []string{"ev-web", "ev-app"}[i%2]
		v := fmt.Sprintf("user%d:%d", i%7, i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	top := streams.NewTopology()
	in := streams.FromRegex(top, streams.String, streams.String, `^ev-`)
	streams.SelectKey(in, func(_ string, v string) (string, error) {
		user, _, _ := strings.Cut(v, ":")
		return user, nil
	}).Repartition(streams.String, streams.String, streams.Named("by-user")).
		To("per-user", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("repart"),
		streams.WithGuarantee(streams.ExactlyOnceV2), streams.RepartitionPartitions(5))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(runCtx) }()

	partitionOf := map[string]int32{}
	seen := readAllRecords(t, b.Addr, "per-user", n, func(r *kgo.Record) {
		if p, ok := partitionOf[string(r.Key)]; ok && p != r.Partition {
			t.Errorf("user %s in partitions %d and %d", r.Key, p, r.Partition)
		}
		partitionOf[string(r.Key)] = r.Partition
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("%s seen %d times", v, c)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct records, want %d", len(seen), n)
	}
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, "repart-by-user-repartition")
	if err != nil || len(topics["repart-by-user-repartition"].Partitions) != 5 {
		t.Fatalf("internal topic: %v %v", topics, err)
	}
	if s := app.Stats(); s.RecordsIn != 2*n || s.RecordsOut != 2*n {
		t.Errorf("stats %+v, want %d in and out (source and repartition)", s, 2*n)
	}
}

func readAllRecords(t *testing.T, addr, topic string, n int, each func(*kgo.Record)) map[string]int {
	t.Helper()
	seen := map[string]int{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(30 * time.Second)
	total := 0
	for total < n && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			seen[string(r.Value)]++
			total++
			each(r)
		})
		cancel()
	}
	return seen
}

// TestFailModeStopsBeforeTheBadRecord: in ErrorFail mode Run returns the
// record's error and the committed offset stops at the failed record, so a
// restart resumes there (at-least-once).
func TestFailModeStopsBeforeTheBadRecord(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b.Addr, "fail-in", 1)
	produceNumbers(t, b.Addr, "fail-in", 0, 50)
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"fail-in"})
	streams.MapValues(in, func(_ string, v string) (string, error) {
		if v == "37" {
			return "", errors.New("cannot take 37")
		}
		return v, nil
	}, streams.Named("picky")).To("fail-out", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b.Addr), streams.ApplicationID("failing"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = app.Run(ctx)
	t.Logf("run: %v; stats %+v", err, app.Stats())
	if !errors.Is(err, streams.ErrProcessing) || !strings.Contains(err.Error(), `"picky"`) || !strings.Contains(err.Error(), "fail-in[0]@37") {
		t.Fatalf("Run = %v", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offsets, err := kadm.NewClient(cl).FetchOffsets(ctx, "failing")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup("fail-in", 0); !ok || o.At != 37 {
		t.Fatalf("committed %+v, want 37", o)
	}
	if got := readAllRecords(t, b.Addr, "fail-out", 37, func(*kgo.Record) {}); len(got) != 37 {
		t.Fatalf("output has %d records, want the 37 before the failure", len(got))
	}
}

// TestProduceFailureCommitsNothing: at-least-once never commits offsets
// past records whose output was not delivered; Run returns the produce
// error.
func TestProduceFailureCommitsNothing(t *testing.T) {
	b := brokertestStartNoAutoCreate(t)
	createTopic(t, b, "nowhere-in", 1)
	produceNumbers(t, b, "nowhere-in", 0, 20)
	top := streams.NewTopology()
	streams.From(top, streams.String, streams.String, []string{"nowhere-in"}).
		To("missing-topic", streams.String, streams.String)
	app, err := streams.NewApp(top, streams.Brokers(b), streams.ApplicationID("nowhere"),
		streams.CommitInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	err = app.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "produce") || ctx.Err() != nil {
		t.Fatalf("Run = %v (ctx %v), want a produce error before the deadline", err, ctx.Err())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offsets, err := kadm.NewClient(cl).FetchOffsets(ctx, "nowhere")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup("nowhere-in", 0); ok && o.At > 0 {
		t.Fatalf("committed offset %d although nothing was delivered", o.At)
	}
}

func brokertestStartNoAutoCreate(t *testing.T) string {
	return brokertest.Start(t, "--set", "auto.create.topics.enable=false",
		"--set", "group.initial.rebalance.delay.ms=0").Addr
}

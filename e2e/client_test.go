package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The test's own Kafka client is franz-go; it sets up topics and checks what
// the other clients left behind without depending on any external tool.

const clientTimeout = 30 * time.Second

func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.ClientID("strata-e2e"),
		kgo.RetryTimeout(10 * time.Second),
	}, opts...)...)
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// createTopic creates topic with the given partition count (replication 1)
// through CreateTopics.
func createTopic(t testing.TB, addr, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	adm := kadm.NewClient(newClient(t, addr))
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil {
		t.Fatalf("CreateTopics %s (%d partitions): %v (%s)", topic, partitions, err, resp.ErrMessage)
	}
}

// ensureTopic is createTopic for a topic something else may create first
// (a stream job's auto-created input): TOPIC_ALREADY_EXISTS is fine.
func ensureTopic(t testing.TB, addr, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	adm := kadm.NewClient(newClient(t, addr))
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("CreateTopics %s (%d partitions): %v (%s)", topic, partitions, err, resp.ErrMessage)
	}
}

// supportedAPIs returns the API keys the broker lists in ApiVersions, with
// their max versions.
func supportedAPIs(t testing.TB, addr string) map[int16]int16 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName = "strata-e2e"
	req.ClientSoftwareVersion = "0.0.0"
	resp, err := req.RequestWith(ctx, newClient(t, addr))
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	apis := make(map[int16]int16, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		apis[k.ApiKey] = k.MaxVersion
	}
	return apis
}

// supportsConsumerGroups reports whether the broker lists every API a
// classic consumer group needs.
func supportsConsumerGroups(apis map[int16]int16) bool {
	for _, key := range []int16{
		8,  // OffsetCommit
		9,  // OffsetFetch
		10, // FindCoordinator
		11, // JoinGroup
		12, // Heartbeat
		13, // LeaveGroup
		14, // SyncGroup
	} {
		if _, ok := apis[key]; !ok {
			return false
		}
	}
	return true
}

// produceSync produces records (topic set by the caller) with acks=all and
// fails the test on any error.
func produceSync(t testing.TB, cl *kgo.Client, records ...*kgo.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumeN reads topic from the start without a group until it has n
// records, failing the test if they do not arrive within clientTimeout.
func consumeN(t testing.TB, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := newClient(t, addr,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var records []*kgo.Record
	for len(records) < n {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume %s: got %d of %d records within %s", topic, len(records), n, clientTimeout)
		}
		for _, err := range fetches.Errors() {
			t.Fatalf("consume %s partition %d: %v", err.Topic, err.Partition, err.Err)
		}
		records = append(records, fetches.Records()...)
	}
	return records
}

// keyedValues returns "key value" strings of records, in the given order.
func keyedValues(records []*kgo.Record) []string {
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = fmt.Sprintf("%s %s", r.Key, r.Value)
	}
	return out
}

package broker

// Features seen through franz-go: kmsg requests issued by a kgo client,
// and the transactional producer, which picks KIP-890 part 2 behaviour
// from the finalized transaction.version.

import (
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// writtenKeys records the API keys a kgo client writes.
type writtenKeys struct {
	mu   sync.Mutex
	keys map[int16]int
}

func (w *writtenKeys) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[int16]int{}
	}
	w.keys[key]++
}

func (w *writtenKeys) count(key kmsg.Key) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keys[key.Int16()]
}

// TestFeaturesKgoApiVersions: a kgo client negotiates ApiVersions v5 (all
// features, as v4) or, capped at Kafka 3.8's versions, v3 (no minimum-0
// ones).
func TestFeaturesKgoApiVersions(t *testing.T) {
	tb := startTestBroker(t)
	ctx := testContext(t)
	for _, tc := range []struct {
		name      string
		opts      []kgo.Opt
		version   int16
		supported map[string][2]int16
	}{
		{"latest", nil, 5, map[string][2]int16{"metadata.version": {7, 25}, "group.version": {0, 1}, "transaction.version": {0, 0}, "kraft.version": {0, 0}}},
		{"kafka 3.8", []kgo.Opt{kgo.MaxVersions(kversion.V3_8_0())}, 3, map[string][2]int16{"metadata.version": {7, 25}}},
	} {
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, tb.client(tc.opts...))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if resp.Version != tc.version {
			t.Fatalf("%s: negotiated v%d, want v%d", tc.name, resp.Version, tc.version)
		}
		f := featuresOf(t, resp)
		if !maps.Equal(f.supported, tc.supported) || !maps.Equal(f.finalized, defaultFinalized) || f.epoch != 0 {
			t.Errorf("%s: %+v, want supported %v finalized %v epoch 0", tc.name, f, tc.supported, defaultFinalized)
		}
	}
}

// TestFeaturesKgoUpdateAndTransactions: UpdateFeatures through kmsg on a
// kgo client refuses transaction.version 2 and applies a metadata.version
// change; franz-go's transactional producer keeps to the pre-KIP-890-part-2
// protocol (explicit AddPartitionsToTxn) against the advertised features
// and commits, and read_committed consumers see the records.
func TestFeaturesKgoUpdateAndTransactions(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("feat-eos", 1, nil)
	ctx := testContext(t)
	admin := tb.client()

	update := func(u kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
		t.Helper()
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.TimeoutMillis = 30000
		req.FeatureUpdates = append(req.FeatureUpdates, u)
		resp, err := req.RequestWith(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != 1 {
			t.Fatalf("UpdateFeatures negotiated v%d, want v1", resp.Version)
		}
		return resp
	}
	if resp := update(featureUpdate("transaction.version", 2, 1)); resp.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("transaction.version 2: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := update(featureUpdate("metadata.version", 22, 2)); resp.ErrorCode != 0 || len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 {
		t.Fatalf("metadata.version 22: %v %v %+v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage, resp.Results)
	}
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if f := featuresOf(t, resp); f.finalized["metadata.version"] != 22 || f.epoch != 1 {
		t.Fatalf("after the update: %+v", f)
	}
	if _, ok := featuresOf(t, resp).finalized["transaction.version"]; ok {
		t.Fatal("transaction.version finalized")
	}

	hooks := &writtenKeys{}
	prod := tb.client(kgo.TransactionalID("feat-tx"), kgo.DefaultProduceTopic("feat-eos"), kgo.WithHooks(hooks))
	for round, values := range [][]string{{"a", "b"}, {"c"}} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("round %d: produce: %v", round, err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("round %d: commit: %v", round, err)
		}
	}
	if n := hooks.count(kmsg.AddPartitionsToTxn); n == 0 {
		t.Fatal("franz-go never sent AddPartitionsToTxn: it took the KIP-890 part 2 path")
	}
	// Data offsets: a 0, b 1, marker 2, c 3, marker 4.
	if got := readValues(t, tb, "feat-eos", true, 4); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("read_committed: %v", got)
	}
}

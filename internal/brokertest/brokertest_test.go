package brokertest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestStartProduceRestartConsume(t *testing.T) {
	b := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "bt", Value: []byte("v1")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	cl.Close()
	b.Kill()
	if b.Running() {
		t.Fatal("running after Kill")
	}
	b.Restart()
	cl, err = kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumeTopics("bt"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fs := cl.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatalf("poll: %v", err)
	}
	recs := fs.Records()
	if len(recs) != 1 || string(recs[0].Value) != "v1" {
		t.Fatalf("after restart read %d records, want the one produced", len(recs))
	}
}

// TestFreeAddrNeverRepeats: addresses picked before any is bound (a
// cluster's ports) are distinct, however many are taken.
func TestFreeAddrNeverRepeats(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		addr := FreeAddr(t)
		if seen[addr] {
			t.Fatalf("FreeAddr returned %s twice", addr)
		}
		seen[addr] = true
	}
}

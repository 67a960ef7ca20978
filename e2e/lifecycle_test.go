package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGracefulShutdown: SIGTERM makes the server exit 0 within a few
// seconds, and a restart on the same data directory keeps every record.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const topic, n = "lifecycle", 500
	createTopic(t, srv.addr, topic, 2)

	produceRange := func(from, to int) {
		cl := newClient(t, srv.addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		records := make([]*kgo.Record, 0, to-from)
		for i := from; i < to; i++ {
			records = append(records, &kgo.Record{
				Partition: int32(i % 2),
				Key:       fmt.Appendf(nil, "key-%d", i),
				Value:     fmt.Appendf(nil, "value-%d", i),
			})
		}
		produceSync(t, cl, records...)
		cl.Close()
	}
	checkAll := func(to int) {
		t.Helper()
		records := consumeN(t, srv.addr, topic, to)
		if len(records) != to {
			t.Fatalf("read %d records, want %d", len(records), to)
		}
		next := map[int32]int{0: 0, 1: 1} // the i each partition holds next
		for _, r := range records {
			i := next[r.Partition]
			if want := fmt.Sprintf("key-%d value-%d", i, i); string(r.Key)+" "+string(r.Value) != want || r.Offset != int64(i/2) {
				t.Fatalf("partition %d offset %d: got %s %s, want %s at offset %d", r.Partition, r.Offset, r.Key, r.Value, want, i/2)
			}
			next[r.Partition] = i + 2
		}
	}

	produceRange(0, n)
	checkAll(n)

	took := srv.stop()
	t.Logf("SIGTERM to exit: %s", took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("graceful shutdown took %s, want a few seconds at most", took)
	}

	srv.restart()
	checkAll(n)
	produceRange(n, 2*n)
	checkAll(2 * n)
	srv.stop()
}

// TestAdminHTTP: /healthz answers 200 and /metrics serves Prometheus text.
func TestAdminHTTP(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	body := srv.metrics(t)
	if !strings.Contains(body, "# TYPE ") {
		t.Fatalf("GET /metrics: no Prometheus text exposition in:\n%s", clip(body, 2000))
	}
	srv.stop()
}

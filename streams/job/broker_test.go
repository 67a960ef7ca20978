package job

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
)

var customers = []string{"ann", "bob", "cyd", "dee", "eve", "fay", "gus"}

// orderJSON is a ~200-byte order; amounts cycle through 0..199.99.
func orderJSON(i int) []byte {
	return fmt.Appendf(nil, `{"id":%d,"amount":%d.%02d,"customer":"%s","currency":"EUR","items":3,"note":"order %08d from the web shop, express delivery requested","region":"eu-west","channel":"web","priority":"standard"}`,
		i, i%200, i%100, customers[i%len(customers)], i)
}

func createTopics(t testing.TB, addr string, partitions int32, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resps, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, topics...)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("create topics: %v", err)
	}
}

func produceAll(t testing.TB, addr, topic string, n int, value func(int) []byte) {
	t.Helper()
	produceRecords(t, addr, topic, n, func(i int) *kgo.Record { return &kgo.Record{Value: value(i)} })
}

// produceRecords produces n records to topic, in order, and waits for them.
func produceRecords(t testing.TB, addr, topic string, n int, record func(int) *kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
	)
	for i := 0; i < n; i++ {
		cl.Produce(ctx, record(i), func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

// consumeN reads topic (read_committed) until n records arrived, then on
// until the topic has no open transaction and a second passes without more.
func consumeN(t testing.TB, addr, topic string, n int, timeout time.Duration) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var out []*kgo.Record
	poll := func(d time.Duration) int {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		fs := cl.PollFetches(ctx)
		before := len(out)
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
		return len(out) - before
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		poll(500 * time.Millisecond)
		if len(out) < n {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		stable, err1 := adm.ListCommittedOffsets(ctx, topic)
		ends, err2 := adm.ListEndOffsets(ctx, topic)
		cancel()
		if err1 != nil || err2 != nil {
			continue
		}
		open := false
		ends.Each(func(o kadm.ListedOffset) {
			if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset != o.Offset {
				open = true
			}
		})
		if open {
			continue
		}
		for poll(time.Second) > 0 {
		}
		return out
	}
	t.Fatalf("%s: %d records after %s, want %d", topic, len(out), timeout, n)
	return nil
}

func runJob(t testing.TB, j *Job, addr string, opts ...streams.Opt) (stop func()) {
	t.Helper()
	app, err := j.NewApp(append([]streams.Opt{streams.Brokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("job %s: %v", j.Spec.Name, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// TestBigOrders100k is the job over 100k JSON orders: the output
// holds exactly the orders over 100, mapped, keyed by customer, each once.
func TestBigOrders100k(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createTopics(t, b.Addr, 3, "orders", "big-orders")
	const n = 100_000
	produceAll(t, b.Addr, "orders", n, orderJSON)

	j, err := Parse([]byte(bigOrders))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stop := runJob(t, j, b.Addr)
	want := map[int]string{}
	for i := 0; i < n; i++ {
		if float64(i%200)+float64(i%100)/100 > 100 {
			want[i] = strings.ToUpper(customers[i%len(customers)])
		}
	}
	out := consumeN(t, b.Addr, "big-orders", len(want), 90*time.Second)
	t.Logf("%d orders in, %d out, %s", n, len(out), time.Since(start).Round(time.Millisecond))
	stop()
	if len(out) != len(want) {
		t.Fatalf("%d records out, want %d", len(out), len(want))
	}
	seen := map[int]bool{}
	for _, r := range out {
		var v struct {
			ID       *int     `json:"id"`
			Amount   *float64 `json:"amount"`
			Customer *string  `json:"customer"`
		}
		dec := json.NewDecoder(strings.NewReader(string(r.Value)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil || v.ID == nil || v.Amount == nil || v.Customer == nil {
			t.Fatalf("record %s: not the mapped form (%v)", r.Value, err)
		}
		id := *v.ID
		cust, ok := want[id]
		if !ok || seen[id] {
			t.Fatalf("order %d: unexpected or duplicated", id)
		}
		seen[id] = true
		if *v.Customer != cust || string(r.Key) != cust || *v.Amount <= 100 {
			t.Fatalf("order %d: key %q value %s, want customer and key %q", id, r.Key, r.Value, cust)
		}
	}
}

// TestRoutingOverBroker: flat_map, branch to topics, and dead-letter
// routing with the failure headers, through a real broker at at-least-once.
func TestRoutingOverBroker(t *testing.T) {
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0")
	createTopics(t, b.Addr, 2, "baskets", "bulk", "small", "baskets-dlq")
	src := `name: baskets
input: {topics: [baskets]}
pipeline:
  - flat_map: value.items
  - key: value.sku
  - branch:
      - when: value.qty >= 10
        to: bulk
      - default: small
errors: {mode: dead_letter, topic: baskets-dlq}
commit_interval: 200ms
`
	j, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	produceAll(t, b.Addr, "baskets", n, func(i int) []byte {
		if i%50 == 7 {
			return []byte(`{"items": "not a list"}`)
		}
		return fmt.Appendf(nil, `{"items": [{"sku": "a%d", "qty": %d}, {"sku": "b%d", "qty": 1}]}`, i, i%20, i)
	})
	runJob(t, j, b.Addr)
	bad := 0
	bulkWant := 0
	for i := 0; i < n; i++ {
		if i%50 == 7 {
			bad++
		} else if i%20 >= 10 {
			bulkWant++
		}
	}
	good := n - bad
	bulk := consumeN(t, b.Addr, "bulk", bulkWant, 30*time.Second)
	small := consumeN(t, b.Addr, "small", 2*good-bulkWant, 30*time.Second)
	dlq := consumeN(t, b.Addr, "baskets-dlq", bad, 30*time.Second)
	if len(bulk) != bulkWant || len(small) != 2*good-bulkWant || len(dlq) != bad {
		t.Fatalf("bulk %d small %d dlq %d; want %d %d %d", len(bulk), len(small), len(dlq), bulkWant, 2*good-bulkWant, bad)
	}
	for _, r := range bulk {
		if !strings.HasPrefix(string(r.Key), "a") {
			t.Errorf("bulk record keyed %q", r.Key)
		}
	}
	for _, r := range dlq {
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		if h[streams.HeaderErrorStage] != "step 1 (flat_map)" || !strings.Contains(h[streams.HeaderErrorMessage], "want a list") ||
			h[streams.HeaderErrorTopic] != "baskets" || h[streams.HeaderErrorOffset] == "" || h[streams.HeaderErrorPartition] == "" ||
			string(r.Value) != `{"items": "not a list"}` {
			t.Errorf("dead letter %s with headers %v", r.Value, h)
		}
	}
}

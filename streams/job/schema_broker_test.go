package job

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/internal/brokertest"
	"github.com/strata-streaming/strata/streams"
)

// franzOrder is orderAvsc for hamba's struct codec.
type franzOrder struct {
	ID       int64     `avro:"id"`
	Amount   float64   `avro:"amount"`
	Customer string    `avro:"customer"`
	Placed   time.Time `avro:"placed"`
	Note     *string   `avro:"note"`
}

// franzBigOrder is bigOrderAvsc for hamba's struct codec.
type franzBigOrder struct {
	ID       int64   `avro:"id"`
	Customer string  `avro:"customer"`
	Amount   float64 `avro:"amount"`
	Note     string  `avro:"note"`
}

// waitFor polls cond every 50ms until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.After(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		case <-tick.C:
		}
	}
}

// TestAvroJobOverBroker: a real `strata server` with its schema registry;
// orders framed by franz-go's pkg/sr Serde (hamba's struct codec) are
// filtered and mapped on their decoded fields and written as Avro under
// big-orders-value, which franz-go decodes again. Orders without a note
// do not fit the output schema and, with a record naming a schema id the
// registry does not have, go to the dead-letter topic unchanged.
func TestAvroJobOverBroker(t *testing.T) {
	registryAddr := brokertest.FreeAddr(t)
	b := brokertest.Start(t, "--set", "group.initial.rebalance.delay.ms=0",
		"--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+registryAddr)
	url := "http://" + registryAddr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	franz, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the registry of strata server", func() error {
		_, err := franz.Subjects(ctx)
		return err
	})
	createTopics(t, b.Addr, 2, "orders", "big-orders", "orders-dlq")

	created, err := franz.CreateSchema(ctx, "orders-value", sr.Schema{Schema: orderAvsc, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	orderSchema := hamba.MustParse(orderAvsc)
	var in sr.Serde
	in.Register(created.ID, franzOrder{},
		sr.EncodeFn(func(v any) ([]byte, error) { return hamba.Marshal(orderSchema, v) }))
	// The same bytes under an id the registry never gave out.
	var unknown sr.Serde
	unknown.Register(created.ID+1000, franzOrder{},
		sr.EncodeFn(func(v any) ([]byte, error) { return hamba.Marshal(orderSchema, v) }))

	const n = 300
	placed := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	order := func(i int) franzOrder {
		o := franzOrder{ID: int64(i), Amount: float64(i%200) + 0.5, Customer: customers[i%len(customers)], Placed: placed.Add(time.Duration(i) * time.Minute)}
		if i%10 != 3 {
			note := fmt.Sprintf("note %d", i)
			o.Note = &note
		}
		return o
	}
	const unknownAt = 77
	produceAll(t, b.Addr, "orders", n, func(i int) []byte {
		s := &in
		if i == unknownAt {
			s = &unknown
		}
		v, err := s.Encode(order(i))
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
	wantOut := map[int64]franzBigOrder{}
	var wantDLQ []int
	for i := 0; i < n; i++ {
		o := order(i)
		switch {
		case i == unknownAt:
			wantDLQ = append(wantDLQ, i)
		case o.Amount <= 100:
		case o.Note == nil:
			wantDLQ = append(wantDLQ, i)
		default:
			wantOut[o.ID] = franzBigOrder{ID: o.ID, Customer: strings.ToUpper(o.Customer), Amount: o.Amount, Note: *o.Note}
		}
	}

	src := strings.Replace(avroJob(url), "errors:", "commit_interval: 200ms\nerrors:", 1)
	j, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	runJob(t, j, b.Addr)
	out := consumeN(t, b.Addr, "big-orders", len(wantOut), 60*time.Second)
	dlq := consumeN(t, b.Addr, "orders-dlq", len(wantDLQ), 30*time.Second)

	// Read the output with franz-go: the schema the job registered.
	outVersion, err := franz.SchemaByVersion(ctx, "big-orders-value", -1)
	if err != nil {
		t.Fatal(err)
	}
	bigSchema, err := hamba.Parse(outVersion.Schema.Schema)
	if err != nil {
		t.Fatal(err)
	}
	var outSerde sr.Serde
	outSerde.Register(outVersion.ID, franzBigOrder{},
		sr.DecodeFn(func(b []byte, v any) error { return hamba.Unmarshal(bigSchema, b, v) }))
	if len(out) != len(wantOut) {
		t.Fatalf("%d records out, want %d", len(out), len(wantOut))
	}
	seen := map[int64]bool{}
	for _, r := range out {
		var got franzBigOrder
		if err := outSerde.Decode(r.Value, &got); err != nil {
			t.Fatalf("franz-go cannot decode the output %x: %v", r.Value, err)
		}
		if want, ok := wantOut[got.ID]; !ok || seen[got.ID] || got != want {
			t.Fatalf("output %+v: want %+v (expected %v, seen %v)", got, want, ok, seen[got.ID])
		}
		seen[got.ID] = true
	}

	if len(dlq) != len(wantDLQ) {
		t.Fatalf("%d dead letters, want %d", len(dlq), len(wantDLQ))
	}
	kinds := map[string]int{}
	for _, r := range dlq {
		h := headersOf(r)
		kinds[h[streams.HeaderErrorKind]]++
		if h[streams.HeaderErrorOffset] == "" || h[streams.HeaderErrorTopic] != "orders" {
			t.Errorf("dead letter headers %v", h)
		}
		switch h[streams.HeaderErrorKind] {
		case string(streams.KindDeserialize):
			if !strings.Contains(h[streams.HeaderErrorMessage], "error_code 40403") {
				t.Errorf("unknown id dead letter: %v", h)
			}
		case string(streams.KindSerialize):
			if !strings.Contains(h[streams.HeaderErrorMessage], ".note: want a string, got null") {
				t.Errorf("misfit dead letter: %v", h)
			}
		}
		if len(r.Value) < 5 || r.Value[0] != 0 {
			t.Errorf("dead letter value %x: want the input record unchanged", r.Value)
		}
	}
	if kinds[string(streams.KindDeserialize)] != 1 || kinds[string(streams.KindSerialize)] != len(wantDLQ)-1 {
		t.Fatalf("dead letters by kind %v", kinds)
	}
}

package main

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/internal/brokertest"
)

// TestSchemaRegistryValidatesRecords: `strata server --set
// schema.registry.enable=true` makes the registry the node's schema
// validator: on a topic with confluent.value.schema.validation=true a
// record framed with a registered id is accepted, one that is not framed
// refused with INVALID_RECORD.
func TestSchemaRegistryValidatesRecords(t *testing.T) {
	addr := brokertest.FreeAddr(t)
	b := brokertest.Start(t, "--set", "schema.registry.enable=true", "--set", "schema.registry.listen="+addr)
	waitHTTPOK(t, "http://"+addr+"/subjects", "the schema registry in the server")
	ctx := t.Context()
	rcl, err := sr.NewClient(sr.URLs("http://" + addr))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := rcl.CreateSchema(ctx, "checked-value", sr.Schema{Schema: `"string"`})
	if err != nil {
		t.Fatal(err)
	}
	var serde sr.Serde
	serde.Register(ss.ID, "", sr.EncodeFn(func(v any) ([]byte, error) {
		s := v.(string) // Avro's string: zigzag length, then the bytes
		return append([]byte{byte(len(s) << 1)}, s...), nil
	}))
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.DefaultProduceTopic("checked"), kgo.RetryTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	created, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, map[string]*string{"confluent.value.schema.validation": kadm.StringPtr("true")}, "checked")
	if err == nil {
		err = created.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	// The add-on sets the validator just after its REST API answers.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := cl.ProduceSync(ctx, &kgo.Record{Value: serde.MustEncode("hello")}).FirstErr()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("framed with a registered id: %v", err)
		}
	}
	err = cl.ProduceSync(ctx, &kgo.Record{Value: []byte("hello")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("not framed: %v, want INVALID_RECORD", err)
	}
}

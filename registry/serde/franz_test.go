package serde

// Cross-checks with an encoder this package did not write: franz-go's
// pkg/sr (its Serde framing, hamba's own struct codec for Avro payloads,
// the Go protobuf runtime for Protobuf ones) and its registry client.

import (
	"reflect"
	"testing"

	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
)

// franzUser is userV2 as a Go struct for hamba's struct codec.
type franzUser struct {
	ID   int64  `avro:"id"`
	Name string `avro:"name"`
}

func TestFranzGoAvro(t *testing.T) {
	url := startRegistry(t)
	c, _ := newTestClient(t, url)
	ctx := testContext(t)

	// franz-go's client registers; ours reads the same id.
	franz, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	created, err := franz.CreateSchema(ctx, "users-value", sr.Schema{Schema: userV2, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := c.Version(ctx, "users-value", -1)
	if err != nil || ours.ID != created.ID || ours.Version != created.Version {
		t.Fatalf("ours %d/%d, franz-go %d/%d, %v", ours.ID, ours.Version, created.ID, created.Version, err)
	}

	hs := hamba.MustParse(userV2)
	var serde sr.Serde
	serde.Register(created.ID, franzUser{},
		sr.EncodeFn(func(v any) ([]byte, error) { return hamba.Marshal(hs, v) }),
		sr.DecodeFn(func(b []byte, v any) error { return hamba.Unmarshal(hs, b, v) }))

	// franz-go encodes, we decode.
	b, err := serde.Encode(franzUser{ID: 1 << 40, Name: "Ann"})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := Decode(ctx, c, b)
	if want := map[string]any{"id": int64(1 << 40), "name": "Ann"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded franz-go's bytes: %#v, %v", got, err)
	}
	// We encode, franz-go decodes; and the bytes are the same.
	ourBytes, err := Encode(ours, map[string]any{"id": float64(1 << 40), "name": "Ann"})
	if err != nil {
		t.Fatal(err)
	}
	if string(ourBytes) != string(b) {
		t.Errorf("our bytes %x, franz-go's %x", ourBytes, b)
	}
	var u franzUser
	if err := serde.Decode(ourBytes, &u); err != nil || u != (franzUser{ID: 1 << 40, Name: "Ann"}) {
		t.Fatalf("franz-go decoded ours: %+v, %v", u, err)
	}
	// A missing field with a default: hamba's reader sees the default.
	ourBytes, _ = Encode(ours, map[string]any{"id": 3})
	if err := serde.Decode(ourBytes, &u); err != nil || u != (franzUser{ID: 3}) {
		t.Fatalf("franz-go decoded a defaulted field: %+v, %v", u, err)
	}
}

func TestFranzGoProtobuf(t *testing.T) {
	c, _ := newTestClient(t, startRegistry(t))
	ctx := testContext(t)
	mustRegister(t, c, "common", Text{Type: schema.Protobuf, Schema: commonProto})
	order := mustRegister(t, c, "orders-value", Text{Type: schema.Protobuf, Schema: orderProto,
		References: []schema.Reference{{Name: "acme/common.proto", Subject: "common", Version: 1}}})

	// franz-go frames a message the Go protobuf runtime marshalled, with
	// the index path of acme.Refund ([1]).
	md, err := protobuf.MessageByIndexes(order.Parsed, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	msg := dynamicpb.NewMessage(md)
	msg.Set(md.Fields().ByName("order_id"), protoreflect.ValueOfString("o9"))
	var serde sr.Serde
	serde.Register(order.ID, &dynamicpb.Message{}, sr.Index(1),
		sr.EncodeFn(func(v any) ([]byte, error) { return proto.Marshal(v.(*dynamicpb.Message)) }),
		sr.DecodeFn(func(b []byte, v any) error { return proto.Unmarshal(b, v.(*dynamicpb.Message)) }))
	b, err := serde.Encode(msg)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := Decode(ctx, c, b)
	if want := map[string]any{"orderId": "o9"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded franz-go's bytes: %#v, %v", got, err)
	}
	ourBytes, err := EncodeMessage(order, "acme.Refund", map[string]any{"order_id": "o9"})
	if err != nil {
		t.Fatal(err)
	}
	if string(ourBytes) != string(b) {
		t.Errorf("our bytes %x, franz-go's %x", ourBytes, b)
	}
	back := dynamicpb.NewMessage(md)
	if err := serde.Decode(ourBytes, back); err != nil || !proto.Equal(back, msg) {
		t.Fatalf("franz-go decoded ours: %v, %v", back, err)
	}
}

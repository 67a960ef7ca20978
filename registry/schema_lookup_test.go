package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-streaming/strata/registry/schema"
)

// TestSchemaLookups: ParsedSchema and LatestSchemaID answer from the view;
// a second registry on the same log knows a schema registered through the
// first once CatchUp returns.
func TestSchemaLookups(t *testing.T) {
	log := NewMemoryLog()
	writer := startRegistry(t, log)
	reader := startRegistry(t, log)
	a := newAPI(t, writer)
	v1 := a.register("orders-value", record(`{"name":"id","type":"long"}`))
	v2 := a.register("orders-value", record(`{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null}`))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := reader.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if id, err := reader.LatestSchemaID("orders-value"); err != nil || id != v2 || v1 == v2 {
		t.Fatalf("LatestSchemaID = %d, %v; want %d", id, err, v2)
	}
	typ, parsed, err := reader.ParsedSchema(v1)
	if err != nil || typ != schema.Avro || parsed == nil {
		t.Fatalf("ParsedSchema(%d) = %s, %v, %v", v1, typ, parsed, err)
	}
	if _, _, err := reader.ParsedSchema(9999); !errors.Is(err, ErrUnknownSchemaID) {
		t.Fatalf("ParsedSchema(9999) = %v, want ErrUnknownSchemaID", err)
	}
	if _, err := reader.LatestSchemaID("nothing-value"); !errors.Is(err, ErrWrongSubject) {
		t.Fatalf("LatestSchemaID of a subject without versions = %v, want ErrWrongSubject", err)
	}
}

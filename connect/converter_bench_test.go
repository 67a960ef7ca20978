package connect

import (
	"testing"
)

// BenchmarkJSONConverter measures the envelope codec on a five-field row,
// the shape a JDBC source produces.
func BenchmarkJSONConverter(b *testing.B) {
	schema := &Schema{Type: TypeStruct, Name: "row", Fields: []Field{
		{Name: "id", Index: 0, Schema: &Schema{Type: TypeInt64}},
		{Name: "name", Index: 1, Schema: &Schema{Type: TypeString, Optional: true}},
		{Name: "amount", Index: 2, Schema: &Schema{Type: TypeBytes, Name: LogicalDecimal, Parameters: map[string]string{"scale": "2"}}},
		{Name: "ok", Index: 3, Schema: &Schema{Type: TypeBoolean}},
		{Name: "score", Index: 4, Schema: &Schema{Type: TypeFloat64}},
	}}
	value := &Struct{Schema: schema, Values: []any{int64(42), "a name of some length", "1234.56", true, 0.75}}
	c := &JSONConverter{SchemasEnable: true}
	data, err := c.FromConnect("t", schema, value)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("FromConnect", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := c.FromConnect("t", schema, value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ToConnect", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, _, err := c.ToConnect("t", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

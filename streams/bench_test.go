package streams_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// BenchmarkTypedFilterMap is the typed DSL's filter+map over ~200-byte
// JSON orders in memory (decode with JSON[T], filter, map, encode), without
// a broker: the library's own per-record cost.
func BenchmarkTypedFilterMap(b *testing.B) {
	type fullOrder struct {
		ID       int     `json:"id"`
		Amount   float64 `json:"amount"`
		Customer string  `json:"customer"`
		Currency string  `json:"currency"`
		Items    int     `json:"items"`
		Note     string  `json:"note"`
		Region   string  `json:"region"`
	}
	t := streams.NewTopology()
	in := streams.From(t, streams.Bytes, streams.JSON[fullOrder](), []string{"orders"})
	big := in.Filter(func(_ []byte, o fullOrder) (bool, error) { return o.Amount > 100, nil })
	streams.MapValues(big, func(_ []byte, o fullOrder) (order, error) {
		return order{ID: o.ID, Amount: o.Amount, Customer: strings.ToUpper(o.Customer)}, nil
	}).To("big", streams.Bytes, streams.JSON[order]())
	d, err := streams.NewTestDriver(t)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([][]byte, 1000)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, `{"id":%d,"amount":%d.5,"customer":"cust%d","currency":"EUR","items":3,"note":"order %08d from the web shop, express delivery requested","region":"eu-west"}`,
			i, i%200, i%7, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := d.Pipe(&kgo.Record{Topic: "orders", Value: recs[i%len(recs)]}); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 0 {
			d.Output("big")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

package streams_test

import (
	"strings"
	"testing"

	"github.com/strata-streaming/strata/streams"
)

// TestGlobalTableJoin: stream records join the global table's value for
// the key the mapper picks (here a field of the value), see its updates
// and deletions, and the left join keeps records without a match.
func TestGlobalTableJoin(t *testing.T) {
	top := streams.NewTopology()
	products := streams.GlobalTableFrom(top, streams.String, streams.String, "products")
	orders := streams.From(top, streams.String, streams.String, []string{"orders"})
	productOf := func(_ string, order string) (string, error) { p, _, _ := strings.Cut(order, ":"); return p, nil }
	streams.JoinGlobal(orders, products, productOf, func(_ string, o, p string) (string, error) {
		return o + "=" + p, nil
	}).To("inner", streams.String, streams.String)
	streams.LeftJoinGlobal(orders, products, productOf, func(_ string, o string, p *string) (string, error) {
		if p == nil {
			return o + "=?", nil
		}
		return o + "=" + *p, nil
	}).To("left", streams.String, streams.String)
	d := newDriver(t, top)

	pipeAt(t, d, "products", "p1", "pen", 1)
	pipeAt(t, d, "orders", "c1", "p1:2", 2)
	pipeAt(t, d, "orders", "c2", "p2:1", 3)
	pipeAt(t, d, "products", "p1", "pencil", 4)
	pipeAt(t, d, "orders", "c3", "p1:5", 5)
	pipeTombstone(t, d, "products", "p1", 6)
	pipeAt(t, d, "orders", "c4", "p1:1", 7)

	wantKV(t, d, "inner", kvs("c1", "p1:2=pen", "c3", "p1:5=pencil"))
	wantKV(t, d, "left", kvs("c1", "p1:2=pen", "c2", "p2:1=?", "c3", "p1:5=pencil", "c4", "p1:1=?"))
}

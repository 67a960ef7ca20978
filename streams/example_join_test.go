package streams_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

// A stream-table join: each click is enriched with its user's current
// name, including after the user is renamed mid-stream; clicks of unknown
// users keep a placeholder (left join).
func ExampleLeftJoinTable() {
	t := streams.NewTopology()
	users := streams.TableFrom(t, streams.String, streams.String, "users")
	clicks := streams.From(t, streams.String, streams.String, []string{"clicks"})
	streams.LeftJoinTable(clicks, users, func(_ string, page string, name *string) (string, error) {
		if name == nil {
			return page + " by someone", nil
		}
		return page + " by " + *name, nil
	}).To("enriched", streams.String, streams.String)

	d, _ := streams.NewTestDriver(t)
	defer d.Close()
	pipe := func(topic, key, value string) {
		_ = d.Pipe(&kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value), Timestamp: time.Now()})
	}
	pipe("users", "u1", "Ann")
	pipe("clicks", "u1", "/home")
	pipe("clicks", "u2", "/home")
	pipe("users", "u1", "Annie")
	pipe("clicks", "u1", "/cart")
	out, _ := streams.ReadOutput(d, "enriched", streams.String, streams.String)
	for _, kv := range out {
		fmt.Println(kv.Key, kv.Value)
	}
	// Output:
	// u1 /home by Ann
	// u2 /home by someone
	// u1 /cart by Annie
}

// A foreign-key join: each order ("<customer id>|<item>") is joined with
// its customer's row, the tables need not be co-partitioned. A renamed
// customer updates all of its orders; an order moved to an unknown
// customer loses its result (a tombstone) until that customer appears.
func ExampleJoinTablesByForeignKey() {
	t := streams.NewTopology()
	orders := streams.TableFrom(t, streams.String, streams.String, "orders")
	customers := streams.TableFrom(t, streams.String, streams.String, "customers")
	streams.JoinTablesByForeignKey(orders, customers,
		func(_ string, order string) (string, error) { c, _, _ := strings.Cut(order, "|"); return c, nil },
		func(_ string, order, name string) (string, error) {
			_, item, _ := strings.Cut(order, "|")
			return item + " for " + name, nil
		},
		streams.ForeignKeyJoined[string, string, string, string]{Keys: streams.String, Values: streams.String,
			ForeignKeys: streams.String, ForeignValues: streams.String},
	).ToTopic("orders-enriched", streams.String, streams.String)

	d, _ := streams.NewTestDriver(t)
	defer d.Close()
	pipe := func(topic, key, value string) {
		_ = d.Pipe(&kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(value)})
	}
	pipe("customers", "c1", "Ann")
	pipe("orders", "o1", "c1|tea")
	pipe("orders", "o2", "c1|cup")
	pipe("customers", "c1", "Annie")
	pipe("orders", "o1", "c2|tea")
	pipe("customers", "c2", "Bob")
	for _, r := range d.Output("orders-enriched") {
		if r.Value == nil {
			fmt.Println(string(r.Key), "deleted")
			continue
		}
		fmt.Println(string(r.Key), string(r.Value))
	}
	// Output:
	// o1 tea for Ann
	// o2 cup for Ann
	// o1 tea for Annie
	// o2 cup for Annie
	// o1 deleted
	// o1 tea for Bob
}

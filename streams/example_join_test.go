package streams_test

import (
	"fmt"
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

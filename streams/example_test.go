package streams_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-streaming/strata/streams"
)

type order struct {
	ID       int     `json:"id"`
	Customer string  `json:"customer"`
	Amount   float64 `json:"amount"`
}

// A filter and map over JSON orders, keyed by customer, run in memory.
func Example() {
	t := streams.NewTopology()
	orders := streams.From(t, streams.String, streams.JSON[order](), []string{"orders"})
	big := orders.Filter(func(_ string, o order) (bool, error) { return o.Amount > 100, nil })
	byCustomer := streams.SelectKey(big, func(_ string, o order) (string, error) {
		return strings.ToUpper(o.Customer), nil
	})
	byCustomer.To("big-orders", streams.String, streams.JSON[order]())

	d, _ := streams.NewTestDriver(t)
	_ = streams.PipeInput(d, "orders", streams.String, streams.JSON[order](), "", order{1, "ann", 50})
	_ = streams.PipeInput(d, "orders", streams.String, streams.JSON[order](), "", order{2, "bob", 150})
	out, _ := streams.ReadOutput(d, "big-orders", streams.String, streams.JSON[order]())
	for _, kv := range out {
		fmt.Println(kv.Key, kv.Value.ID, kv.Value.Amount)
	}
	// Output:
	// BOB 2 150
}

// Split routes each record to the first branch that takes it.
func ExampleStream_Split() {
	t := streams.NewTopology()
	in := streams.From(t, streams.String, streams.Int64, []string{"amounts"})
	sp := in.Split()
	sp.Branch("large", func(_ string, v int64) (bool, error) { return v >= 1000, nil }).
		To("large", streams.String, streams.Int64)
	sp.Branch("medium", func(_ string, v int64) (bool, error) { return v >= 100, nil }).
		To("medium", streams.String, streams.Int64)
	sp.Default().To("small", streams.String, streams.Int64)

	d, _ := streams.NewTestDriver(t)
	for _, v := range []int64{5, 5000, 500} {
		_ = streams.PipeInput(d, "amounts", streams.String, streams.Int64, "k", v)
	}
	for _, topic := range []string{"large", "medium", "small"} {
		out, _ := streams.ReadOutput(d, topic, streams.String, streams.Int64)
		fmt.Println(topic, out)
	}
	// Output:
	// large [{k 5000}]
	// medium [{k 500}]
	// small [{k 5}]
}

// FlatMapValues splits sentences into words; Merge joins two streams.
func ExampleFlatMapValues() {
	t := streams.NewTopology()
	a := streams.From(t, streams.String, streams.String, []string{"a"})
	b := streams.From(t, streams.String, streams.String, []string{"b"})
	words := streams.FlatMapValues(a.Merge(b), func(_ string, s string) ([]string, error) {
		return strings.Fields(s), nil
	})
	lengths := streams.MapValues(words, func(_ string, w string) (int64, error) { return int64(len(w)), nil })
	lengths.To("lengths", streams.String, streams.Int64)

	d, _ := streams.NewTestDriver(t)
	_ = streams.PipeInput(d, "a", streams.String, streams.String, "x", "hello streams")
	_ = streams.PipeInput(d, "b", streams.String, streams.String, "y", "ok")
	out, _ := streams.ReadOutput(d, "lengths", streams.String, streams.Int64)
	fmt.Println(out)
	// Output:
	// [{x 5} {x 7} {y 2}]
}

// A failing operator sends the input record to the dead-letter topic with
// headers naming the failure.
func ExampleDeadLetterTopic() {
	t := streams.NewTopology()
	in := streams.From(t, streams.String, streams.String, []string{"in"})
	streams.MapValues(in, func(_ string, v string) (string, error) {
		if v == "" {
			return "", errors.New("empty value")
		}
		return strings.ToUpper(v), nil
	}, streams.Named("upper")).To("out", streams.String, streams.String)

	d, _ := streams.NewTestDriver(t, streams.OnError(streams.ErrorDeadLetter), streams.DeadLetterTopic("in-dlq"))
	_ = streams.PipeInput(d, "in", streams.String, streams.String, "k", "")
	for _, r := range d.Output("in-dlq") {
		stage, _ := streams.Record[string, string]{Headers: r.Headers}.Header(streams.HeaderErrorStage)
		msg, _ := streams.Record[string, string]{Headers: r.Headers}.Header(streams.HeaderErrorMessage)
		fmt.Printf("%s: %s\n", stage, msg)
	}
	// Output:
	// upper: empty value
}

// Running a topology against brokers: every instance started with the same
// application id shares the input partitions; Run returns after ctx is
// cancelled, having flushed and committed.
func ExampleNewApp() {
	t := streams.NewTopology()
	streams.From(t, streams.Bytes, streams.Bytes, []string{"in"}).To("out", streams.Bytes, streams.Bytes)
	app, err := streams.NewApp(t,
		streams.Brokers("127.0.0.1:9092"),
		streams.ApplicationID("copy"),
		streams.WithGuarantee(streams.ExactlyOnceV2),
		streams.OnError(streams.ErrorDeadLetter),
		streams.DeadLetterTopic("copy-dlq"),
	)
	fmt.Println(app != nil, err)
	// A program would now call app.Run(ctx) with a context cancelled on
	// SIGTERM.

	_, err = streams.NewApp(t, streams.Brokers("127.0.0.1:9092"))
	fmt.Println(err)
	// Output:
	// true <nil>
	// streams: invalid configuration: ApplicationID is required
}

package streams_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/streams"
)

func TestOperatorsCarryHeadersAndTimestamps(t *testing.T) {
	top := streams.NewTopology()
	in := streams.From(top, streams.String, streams.String, []string{"in"})
	var peeked, each []string
	s := in.Peek(func(k, v string) { peeked = append(peeked, v) }).
		FilterNot(func(_ string, v string) (bool, error) { return v == "drop", nil })
	pairs := streams.FlatMap(s, func(k, v string) ([]streams.KeyValue[string, int64], error) {
		return []streams.KeyValue[string, int64]{streams.KV(k+"-a", int64(len(v))), streams.KV(k+"-b", int64(2*len(v)))}, nil
	})
	keyed := streams.SelectKey(pairs, func(k string, v int64) (string, error) { return strings.ToUpper(k), nil })
	mapped := streams.Map(keyed, func(k string, v int64) (int64, string, error) { return v, k, nil })
	mapped.Foreach(func(k int64, v string) error { each = append(each, v); return nil })
	mapped.To("out", streams.Int64, streams.String)

	d, err := streams.NewTestDriver(top)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.UnixMilli(1_700_000_000_000)
	hdr := []kgo.RecordHeader{{Key: "trace", Value: []byte("t1")}}
	for _, v := range []string{"abc", "drop"} {
		if err := d.Pipe(&kgo.Record{Topic: "in", Key: []byte("k"), Value: []byte(v), Headers: hdr, Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := streams.ReadOutput(d, "out", streams.Int64, streams.String)
	if err != nil {
		t.Fatal(err)
	}
	want := []streams.KeyValue[int64, string]{{Key: 3, Value: "K-A"}, {Key: 6, Value: "K-B"}}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("out = %v, want %v", out, want)
	}
	if !reflect.DeepEqual(peeked, []string{"abc", "drop"}) || !reflect.DeepEqual(each, []string{"K-A", "K-B"}) {
		t.Fatalf("peek %v foreach %v", peeked, each)
	}
	// Headers and timestamps carried through (read again from raw output).
	if err := d.Pipe(&kgo.Record{Topic: "in", Key: []byte("z"), Value: []byte("q"), Headers: hdr, Timestamp: ts}); err != nil {
		t.Fatal(err)
	}
	for _, r := range d.Output("out") {
		if !r.Timestamp.Equal(ts) || len(r.Headers) != 1 || string(r.Headers[0].Value) != "t1" {
			t.Fatalf("output record lost timestamp or headers: %v %v", r.Timestamp, r.Headers)
		}
	}
}

func TestErrorModes(t *testing.T) {
	build := func() *streams.Topology {
		top := streams.NewTopology()
		in := streams.From(top, streams.String, streams.Int64, []string{"in"})
		streams.MapValues(in, func(_ string, v int64) (int64, error) {
			if v < 0 {
				return 0, errors.New("negative")
			}
			return v * 2, nil
		}, streams.Named("double")).To("out", streams.String, streams.Int64)
		return top
	}
	bad := []*kgo.Record{
		{Topic: "in", Value: []byte{1, 2, 3}},                                        // not 8 bytes: deserialise error
		{Topic: "in", Value: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // -1: operator error
		{Topic: "in", Value: []byte{0, 0, 0, 0, 0, 0, 0, 4}},
	}
	t.Run("skip", func(t *testing.T) {
		d, _ := streams.NewTestDriver(build(), streams.OnError(streams.ErrorSkip))
		for _, r := range bad {
			if err := d.Pipe(r); err != nil {
				t.Fatal(err)
			}
		}
		out, _ := streams.ReadOutput(d, "out", streams.String, streams.Int64)
		if len(out) != 1 || out[0].Value != 8 || d.Stats().Skipped != 2 {
			t.Fatalf("out %v stats %+v", out, d.Stats())
		}
	})
	t.Run("fail", func(t *testing.T) {
		d, _ := streams.NewTestDriver(build())
		err := d.Pipe(bad[1])
		var se *streams.StageError
		if !errors.Is(err, streams.ErrProcessing) || !errors.As(err, &se) || se.Stage != "double" || se.Kind != streams.KindOperator {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("dead_letter", func(t *testing.T) {
		d, _ := streams.NewTestDriver(build(), streams.OnError(streams.ErrorDeadLetter), streams.DeadLetterTopic("dlq"))
		for _, r := range bad {
			if err := d.Pipe(r); err != nil {
				t.Fatal(err)
			}
		}
		dlq := d.Output("dlq")
		if len(dlq) != 2 {
			t.Fatalf("dlq has %d records", len(dlq))
		}
		kinds := []string{}
		for _, r := range dlq {
			k, _ := streams.Record[string, string]{Headers: r.Headers}.Header(streams.HeaderErrorKind)
			kinds = append(kinds, string(k))
		}
		if !reflect.DeepEqual(kinds, []string{"deserialize", "operator"}) {
			t.Fatalf("kinds %v", kinds)
		}
	})
	t.Run("panic", func(t *testing.T) {
		top := streams.NewTopology()
		in := streams.From(top, streams.String, streams.String, []string{"in"})
		in.Foreach(func(string, string) error { panic("boom") })
		d, _ := streams.NewTestDriver(top)
		if err := d.Pipe(&kgo.Record{Topic: "in"}); !errors.Is(err, streams.ErrProcessing) || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestRepartitionRegexAndTopicChooser(t *testing.T) {
	top := streams.NewTopology()
	in := streams.FromRegex(top, streams.String, streams.String, `^events-`)
	byUser := streams.SelectKey(in, func(_ string, v string) (string, error) {
		user, _, _ := strings.Cut(v, ":")
		return user, nil
	}).Repartition(streams.String, streams.String, streams.Named("by-user"))
	byUser.ToTopicFunc(func(r streams.Record[string, string]) (string, error) {
		return "user-" + r.Key, nil
	}, streams.String, streams.String)
	d, err := streams.NewTestDriver(top, streams.ApplicationID("app"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*kgo.Record{
		{Topic: "events-web", Value: []byte("ann:click")},
		{Topic: "events-app", Value: []byte("bob:open")},
		{Topic: "other", Value: []byte("ann:ignored")},
	} {
		if err := d.Pipe(r); err != nil {
			t.Fatal(err)
		}
	}
	ann := d.Output("user-ann")
	bob := d.Output("user-bob")
	if len(ann) != 1 || string(ann[0].Value) != "ann:click" || len(bob) != 1 || string(bob[0].Key) != "bob" {
		t.Fatalf("ann %v bob %v", ann, bob)
	}
}

func TestInvalidTopology(t *testing.T) {
	top := streams.NewTopology()
	streams.FromRegex(top, streams.String, streams.String, `([`)
	if _, err := streams.NewApp(top, streams.Brokers("x:1"), streams.ApplicationID("a")); !errors.Is(err, streams.ErrTopology) {
		t.Fatalf("bad regex: %v", err)
	}
	if _, err := streams.NewApp(streams.NewTopology(), streams.Brokers("x:1"), streams.ApplicationID("a")); !errors.Is(err, streams.ErrTopology) {
		t.Fatalf("no source: %v", err)
	}
	top = streams.NewTopology()
	streams.From(top, streams.String, streams.String, []string{"in"})
	if _, err := streams.NewApp(top, streams.Brokers("x:1"), streams.ApplicationID("a"), streams.OnError(streams.ErrorDeadLetter)); !errors.Is(err, streams.ErrConfig) {
		t.Fatalf("dead letter without topic: %v", err)
	}
}

package connect

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func produceValues(t *testing.T, brokers, topic string, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSinkErrorTolerance: with errors.tolerance=all a record the JSON
// converter cannot read goes to the dead-letter topic with Kafka's
// __connect.errors.* headers and the sink goes on; with none the task
// fails and its status carries the reason.
func TestSinkErrorTolerance(t *testing.T) {
	b := startBroker(t)
	w := startWorker(t, testWorkerProps(b.Addr))
	base := "http://" + w.Addr()
	good := func(s string) string { return `{"schema":{"type":"string","optional":false},"payload":"` + s + `"}` }
	produceValues(t, b.Addr, "in", good("one"), "not json", good("two"))
	dir := t.TempDir()

	tolerant := filepath.Join(dir, "tolerant.txt")
	restJSON(t, "POST", base+"/connectors", map[string]any{"name": "tolerant", "config": map[string]string{
		"connector.class": "file-sink", "file": tolerant, "topics": "in",
		"errors.tolerance": "all", "errors.log.enable": "true",
		"errors.deadletterqueue.topic.name":             "dlq",
		"errors.deadletterqueue.context.headers.enable": "true"}}, 201, nil)
	strict := filepath.Join(dir, "strict.txt")
	restJSON(t, "POST", base+"/connectors", map[string]any{"name": "strict", "config": map[string]string{
		"connector.class": "file-sink", "file": strict, "topics": "in"}}, 201, nil)

	waitFor(t, 30*time.Second, "good records in the tolerant sink", func() (bool, string) {
		lines := fileLines(t, tolerant)
		return strings.Join(lines, ",") == "one,two", strings.Join(lines, ",")
	})
	dead := readTopic(t, b.Addr, "dlq", 1)
	if string(dead[0].Value) != "not json" {
		t.Fatalf("dead letter value %q", dead[0].Value)
	}
	headers := map[string]string{}
	for _, h := range dead[0].Headers {
		headers[h.Key] = string(h.Value)
	}
	want := map[string]string{
		"__connect.errors.topic": "in", "__connect.errors.partition": "0", "__connect.errors.offset": "1",
		"__connect.errors.connector.name": "tolerant", "__connect.errors.task.id": "0",
		"__connect.errors.stage":                "VALUE_CONVERTER",
		"__connect.errors.exception.class.name": "org.apache.kafka.connect.errors.DataException",
	}
	for k, v := range want {
		if headers[k] != v {
			t.Errorf("header %s = %q, want %q (all: %v)", k, headers[k], v, headers)
		}
	}
	if !strings.Contains(headers["__connect.errors.exception.message"], "schema") {
		t.Errorf("exception message %q", headers["__connect.errors.exception.message"])
	}

	var s connectorStatus
	waitFor(t, 30*time.Second, "strict task FAILED", func() (bool, string) {
		restJSON(t, "GET", base+"/connectors/strict/status", nil, 200, &s)
		return len(s.Tasks) == 1 && s.Tasks[0].State == StateFailed, string(mustJSON(s))
	})
	if !strings.Contains(s.Tasks[0].Trace, "VALUE_CONVERTER") || !strings.Contains(s.Tasks[0].Trace, "errors.tolerance=none") || s.Connector.State != StateRunning {
		t.Fatalf("failed status: %+v", s)
	}
	// The batch is converted before Put, so nothing of it was written.
	if lines := fileLines(t, strict); len(lines) != 0 {
		t.Fatalf("strict sink wrote %v", lines)
	}
	// The group did not commit past the bad record: a restart fails again.
	adm := kadm.NewClient(w.store.producer)
	offs, err := adm.FetchOffsets(context.Background(), "connect-strict")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("in", 0); ok && o.At > 1 {
		t.Fatalf("strict sink committed offset %d past the bad record", o.At)
	}
}

// TestExactlyOnceSource: with exactly.once.source.support=enabled a source
// task writes its records and offsets in transactions under
// transactional.id <group.id>-<connector>-<task>.
func TestExactlyOnceSource(t *testing.T) {
	b := startBroker(t)
	w := startWorker(t, testWorkerProps(b.Addr, "exactly.once.source.support", "enabled", "group.id", "eos-cluster"))
	base := "http://" + w.Addr()
	input := filepath.Join(t.TempDir(), "in.txt")
	appendLines(t, input, 1, 20)
	restJSON(t, "POST", base+"/connectors", map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "file-source", "file": input, "topic": "eos", "batch.size": "7",
		"value.converter": "string"}}, 201, nil)
	recs := readTopic(t, b.Addr, "eos", 20)
	for i, r := range recs {
		if string(r.Value) != "line-"+itoa(i+1) {
			t.Fatalf("record %d = %q", i, r.Value)
		}
	}
	adm := kadm.NewClient(w.store.producer)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	described, err := adm.DescribeTransactions(ctx, "eos-cluster-src-0")
	if err != nil {
		t.Fatal(err)
	}
	d, ok := described["eos-cluster-src-0"]
	if !ok || d.Err != nil || d.ProducerID < 0 {
		t.Fatalf("transactional id not known to the broker: %+v %v", described, ok)
	}
	var offs offsetsBody
	waitFor(t, 20*time.Second, "offset committed with the records", func() (bool, string) {
		restJSON(t, "GET", base+"/connectors/src/offsets", nil, 200, &offs)
		return len(offs.Offsets) == 1 && offs.Offsets[0].Offset["position"] == float64(20*7+11*1), string(mustJSON(offs))
	})
	// The offset records are transactional too: a read_committed reader of
	// connect-offsets sees them, and the topic holds transaction markers.
	offRecs := readTopic(t, b.Addr, DefaultOffsetTopic, 1)
	if !strings.Contains(string(offRecs[0].Key), `"src"`) {
		t.Fatalf("offset record key %s", offRecs[0].Key)
	}
	ends, err := adm.ListEndOffsets(ctx, DefaultOffsetTopic)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total <= 3 {
		t.Fatalf("offset topic end offsets sum to %d; want the 3 offset records plus their commit markers", total)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

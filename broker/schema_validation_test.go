package broker

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	hamba "github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/registry"
	"github.com/strata-streaming/strata/registry/wire"
)

// The schemas of the schema-validation tests.
const (
	svOrderAvro = `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"item","type":"string"}]}`
	svKeyAvro   = `{"type":"record","name":"Key","namespace":"shop","fields":[{"name":"id","type":"long"}]}`
	svOtherJSON = `{"title":"shop.Other","type":"object","properties":{"n":{"type":"integer"}}}`
)

type svOrder struct {
	ID   int64  `avro:"id"`
	Item string `avro:"item"`
}

type svKey struct {
	ID int64 `avro:"id"`
}

// startSchemaRegistry runs a schema registry in-process against tb (its
// _schemas topic on the test broker), set as tb's validator, and returns
// it with a franz-go sr client of its REST API.
func startSchemaRegistry(t testing.TB, tb *testBroker) (*registry.Registry, *sr.Client) {
	t.Helper()
	cfg := registry.DefaultConfig()
	cfg.Brokers = []string{tb.addr()}
	cfg.Listen = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	r, err := registry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tb.srv.SetSchemaValidator(nil)
		r.Close()
	})
	tb.srv.SetSchemaValidator(r)
	cl, err := sr.NewClient(sr.URLs("http://" + r.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	return r, cl
}

func registerSchema(t testing.TB, cl *sr.Client, subject, text string, typ sr.SchemaType) int {
	t.Helper()
	ss, err := cl.CreateSchema(testContext(t), subject, sr.Schema{Schema: text, Type: typ})
	if err != nil {
		t.Fatalf("register %s: %v", subject, err)
	}
	return ss.ID
}

// avroSerde frames values as Confluent's Avro serializer does, with
// franz-go's sr.Serde (an encoder independent of registry/wire).
func avroSerde(t testing.TB, id int, text string, v any) *sr.Serde {
	t.Helper()
	s := hamba.MustParse(text)
	serde := sr.NewSerde()
	serde.Register(id, v, sr.EncodeFn(func(v any) ([]byte, error) { return hamba.Marshal(s, v) }),
		sr.DecodeFn(func(b []byte, v any) error { return hamba.Unmarshal(s, b, v) }))
	return serde
}

// produceRefused produces records raw (Produce v9) to topic and checks the
// batch is refused with INVALID_RECORD, the records at indexes named, each
// with a message, the first containing message, and nothing appended.
func produceRefused(t *testing.T, tb *testBroker, conn *rawConn, topic string, records []testRecord, indexes []int32, message string) {
	t.Helper()
	before := tb.logEnd(topic, 0)
	got := conn.produceRaw(topic, 0, buildBatch(t, plainBatch(records...)))
	if got.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("%s: error %v, want INVALID_RECORD", message, kerr.ErrorForCode(got.ErrorCode))
	}
	if got.ErrorMessage == nil || !strings.Contains(*got.ErrorMessage, message) {
		t.Fatalf("error message %q, want one with %q", deref(got.ErrorMessage), message)
	}
	var named []int32
	for _, re := range got.ErrorRecords {
		if re.ErrorMessage == nil || *re.ErrorMessage == "" {
			t.Fatalf("%s: record %d has no message", message, re.RelativeOffset)
		}
		named = append(named, re.RelativeOffset)
	}
	if len(indexes) > 0 && !slices.Equal(named, indexes) {
		t.Fatalf("%s: record errors %v, want %v", message, named, indexes)
	}
	if after := tb.logEnd(topic, 0); after != before {
		t.Fatalf("%s: log end %d → %d after a refused batch", message, before, after)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// produceAccepted produces records raw and checks they land at the log end.
func produceAccepted(t *testing.T, tb *testBroker, conn *rawConn, topic string, records ...testRecord) {
	t.Helper()
	before := tb.logEnd(topic, 0)
	got := conn.produceRaw(topic, 0, buildBatch(t, plainBatch(records...)))
	if got.ErrorCode != 0 {
		t.Fatalf("produce to %s: %v %s", topic, kerr.ErrorForCode(got.ErrorCode), deref(got.ErrorMessage))
	}
	if got.BaseOffset != before {
		t.Fatalf("produce to %s: base offset %d, want the log end %d", topic, got.BaseOffset, before)
	}
}

func framedValue(id int, payload []byte) []byte {
	return append(wire.AppendHeader(nil, int32(id)), payload...)
}

// TestSchemaValidation runs a broker with an in-process registry (its
// topic on the broker) and produces through franz-go's kgo, records
// framed by franz-go's sr.Serde, and raw requests to read the messages.
func TestSchemaValidation(t *testing.T) {
	tb := startTestBroker(t)
	_, cl := startSchemaRegistry(t, tb)
	orderID := registerSchema(t, cl, "orders-value", svOrderAvro, sr.TypeAvro)
	otherID := registerSchema(t, cl, "other-value", svOtherJSON, sr.TypeJSON)
	orders := avroSerde(t, orderID, svOrderAvro, svOrder{})
	valid := orders.MustEncode(svOrder{ID: 1, Item: "book"})
	if valid[0] != 0 || len(valid) < 6 {
		t.Fatalf("sr.Serde framed %x", valid)
	}

	tb.createTopic("orders", 1, map[string]*string{valueSchemaValidationConfig: ptr("true")})
	ctx := testContext(t)
	prod := tb.client(kgo.DefaultProduceTopic("orders"))
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: valid}).FirstErr(); err != nil {
		t.Fatalf("valid framed record: %v", err)
	}
	for _, bad := range []struct {
		name  string
		value []byte
	}{
		{"unknown id", framedValue(9999, valid[5:])},
		{"no magic byte", []byte(`{"id":1,"item":"book"}`)},
		{"short", []byte{0, 0, 1}},
		{"another subject's id", framedValue(otherID, []byte(`{"n":1}`))},
	} {
		err := prod.ProduceSync(ctx, &kgo.Record{Value: bad.value}).FirstErr()
		if !errors.Is(err, kerr.InvalidRecord) {
			t.Fatalf("kgo, %s: %v, want INVALID_RECORD", bad.name, err)
		}
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: orders.MustEncode(svOrder{ID: 2})}).FirstErr(); err != nil {
		t.Fatalf("valid record after refused ones: %v", err)
	}

	// The messages and record errors, raw; refused batches change nothing.
	conn := tb.dialRaw()
	ok := testRecord{value: valid, timestamp: time.Now().UnixMilli()}
	rec := func(v []byte) testRecord { return testRecord{value: v, timestamp: ok.timestamp} }
	produceRefused(t, tb, conn, "orders", []testRecord{ok, rec(framedValue(9999, nil))}, []int32{1},
		"value of record 1 (subject 'orders-value'): schema id 9999 is not registered")
	produceRefused(t, tb, conn, "orders", []testRecord{rec([]byte("plain")), ok, rec([]byte{0, 0})}, []int32{0, 2},
		"first byte is 0x70, not the magic byte 0 (and 1 more records)")
	produceRefused(t, tb, conn, "orders", []testRecord{rec([]byte{0, 0, 1})}, []int32{0}, "3 bytes, shorter than the magic byte")
	produceRefused(t, tb, conn, "orders", []testRecord{rec(framedValue(otherID, nil))}, []int32{0},
		"is not registered under subject 'orders-value' (it is under 'other-value')")
	// Tombstones and keys are not checked (key validation is off).
	produceAccepted(t, tb, conn, "orders", ok, testRecord{key: []byte("k"), value: nil, timestamp: ok.timestamp})

	// Mode decode: the id check passes, the payload must decode too.
	undecodable := framedValue(orderID, []byte{0xff})
	produceAccepted(t, tb, conn, "orders", rec(undecodable))
	adm := kadm.NewClient(prod)
	alter := func(topic, name, value string) {
		t.Helper()
		resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: ptr(value)}}, topic)
		if err == nil {
			err = resps[0].Err
		}
		if err != nil {
			t.Fatalf("alter %s %s=%s: %v", topic, name, value, err)
		}
	}
	alter("orders", schemaValidationModeConfig, "decode")
	produceRefused(t, tb, conn, "orders", []testRecord{ok, rec(undecodable)}, []int32{1}, "does not decode with schema id")
	if err := prod.ProduceSync(ctx, &kgo.Record{Value: undecodable}).FirstErr(); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("kgo, undecodable in decode mode: %v", err)
	}
	produceAccepted(t, tb, conn, "orders", ok)

	// Off again: anything goes.
	alter("orders", valueSchemaValidationConfig, "false")
	produceAccepted(t, tb, conn, "orders", rec([]byte("plain")))
	expectConfig(t, adm, "orders", valueSchemaValidationConfig, "false", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "orders", schemaValidationModeConfig, "decode", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "orders", valueSubjectStrategyConfig, "io.confluent.kafka.serializers.subject.TopicNameStrategy", kmsg.ConfigSourceDefaultConfig)
	// The records that were accepted are all there, in order.
	if end := tb.logEnd("orders", 0); end != 7 {
		t.Fatalf("orders ends at %d, want the 7 accepted records", end)
	}
}

// TestSchemaValidationRecordNameStrategies: keys checked under
// RecordNameStrategy (the subject is the schema's record name) and values
// under TopicRecordNameStrategy (<topic>-<record name>).
func TestSchemaValidationRecordNameStrategies(t *testing.T) {
	tb := startTestBroker(t)
	_, cl := startSchemaRegistry(t, tb)
	keyID := registerSchema(t, cl, "shop.Key", svKeyAvro, sr.TypeAvro)
	orderID := registerSchema(t, cl, "events-shop.Order", svOrderAvro, sr.TypeAvro)
	otherID := registerSchema(t, cl, "other-value", svOtherJSON, sr.TypeJSON)
	key := avroSerde(t, keyID, svKeyAvro, svKey{}).MustEncode(svKey{ID: 1})
	value := avroSerde(t, orderID, svOrderAvro, svOrder{}).MustEncode(svOrder{ID: 1, Item: "pen"})
	tb.createTopic("events", 1, map[string]*string{
		keySchemaValidationConfig: ptr("true"), keySubjectStrategyConfig: ptr("RecordNameStrategy"),
		valueSchemaValidationConfig: ptr("true"), valueSubjectStrategyConfig: ptr("io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"),
		schemaValidationModeConfig: ptr("decode"),
	})
	conn := tb.dialRaw()
	now := time.Now().UnixMilli()
	produceAccepted(t, tb, conn, "events", testRecord{key: key, value: value, timestamp: now})
	// A null key is not checked.
	produceAccepted(t, tb, conn, "events", testRecord{value: value, timestamp: now})
	// The value's schema (shop.Order) is not under shop.Key's subject.
	produceRefused(t, tb, conn, "events", []testRecord{{key: value, value: value, timestamp: now}}, []int32{0},
		"key of record 0 (subject 'shop.Order'): schema id")
	// The JSON schema's title names a subject nobody registered.
	produceRefused(t, tb, conn, "events", []testRecord{{key: key, value: framedValue(otherID, []byte(`{}`)), timestamp: now}}, []int32{0},
		"value of record 0 (subject 'events-shop.Other')")
	produceRefused(t, tb, conn, "events", []testRecord{{key: key, value: framedValue(12345, nil), timestamp: now}}, []int32{0},
		"naming its subject")
}

// TestSchemaValidationWithoutValidator: a topic with validation on, on a
// node whose registry add-on is off, refuses produces and says why.
func TestSchemaValidationWithoutValidator(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("strict", 1, map[string]*string{keySchemaValidationConfig: ptr("true")})
	conn := tb.dialRaw()
	produceRefused(t, tb, conn, "strict", []testRecord{{key: []byte("k"), value: []byte("v"), timestamp: time.Now().UnixMilli()}}, nil,
		"topic strict has confluent.key.schema.validation=true, but this node validates no schemas: schema validation needs schema.registry.enable=true on the node")
	err := tb.client(kgo.DefaultProduceTopic("strict")).ProduceSync(testContext(t), &kgo.Record{Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("kgo: %v, want INVALID_RECORD", err)
	}
}

// TestSchemaValidationConfigs: bad values are INVALID_CONFIG with a
// message, at creation and when altered; short strategy names are fine.
func TestSchemaValidationConfigs(t *testing.T) {
	tb := startTestBroker(t)
	adm := tb.admin()
	ctx := testContext(t)
	for _, bad := range []struct{ name, value, message string }{
		{valueSchemaValidationConfig, "yes", `"yes" is not a boolean`},
		{keySubjectStrategyConfig, "SubjectStrategy", "is not a subject name strategy"},
		{valueSubjectStrategyConfig, "io.confluent.kafka.serializers.subject.Nope", "TopicRecordNameStrategy"},
		{schemaValidationModeConfig, "strict", `"strict" is not one of id, decode`},
	} {
		resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{bad.name: ptr(bad.value)}, "bad")
		if err == nil {
			err = resp.Err
		}
		if !errors.Is(err, kerr.InvalidConfig) || !strings.Contains(resp.ErrMessage, bad.message) {
			t.Errorf("create with %s=%s: %v %q, want INVALID_CONFIG with %q", bad.name, bad.value, err, resp.ErrMessage, bad.message)
		}
	}
	tb.createTopic("good", 1, map[string]*string{valueSubjectStrategyConfig: ptr("RecordNameStrategy")})
	resps, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: schemaValidationModeConfig, Value: ptr("everything")}}, "good")
	if err == nil {
		err = resps[0].Err
	}
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("alter mode=everything: %v", err)
	}
	expectConfig(t, adm, "good", valueSubjectStrategyConfig, "RecordNameStrategy", kmsg.ConfigSourceDynamicTopicConfig)
	expectConfig(t, adm, "good", keySchemaValidationConfig, "false", kmsg.ConfigSourceDefaultConfig)
	expectConfig(t, adm, "good", schemaValidationModeConfig, "id", kmsg.ConfigSourceDefaultConfig)
	if typ := topicConfigType(valueSchemaValidationConfig); typ != kmsg.ConfigTypeBoolean {
		t.Errorf("%s has type %v", valueSchemaValidationConfig, typ)
	}
}

// fakeValidator accepts data that starts with "ok" under subject, and
// names every record "rec".
type fakeValidator struct{ subjects []string }

func (f *fakeValidator) CheckRecord(subject string, data []byte, _ bool) error {
	f.subjects = append(f.subjects, subject)
	if !strings.HasPrefix(string(data), "ok") {
		return errors.New("bad")
	}
	return nil
}

func (f *fakeValidator) RecordName([]byte) (string, error) { return "rec", nil }

// TestCheckSchemas: which keys and values are checked under which
// subject, in compressed batches too, and what a refusal looks like.
func TestCheckSchemas(t *testing.T) {
	records := []testRecord{{key: []byte("ok-k"), value: []byte("ok-v")}, {key: nil, value: []byte("bad")}, {key: []byte("bad"), value: nil}}
	for _, tc := range []struct {
		name     string
		rules    schemaRules
		subjects []string
		failed   []int32
	}{
		{"off", schemaRules{}, nil, nil},
		{"values by topic", schemaRules{value: true}, []string{"t-value", "t-value"}, []int32{1}},
		{"keys by record name", schemaRules{key: true, keyStrategy: recordNameStrategy}, []string{"rec", "rec"}, []int32{2}},
		{"both, topic and record name", schemaRules{key: true, value: true, keyStrategy: topicRecordNameStrategy},
			[]string{"t-rec", "t-value", "t-value", "t-rec"}, []int32{1, 2}},
	} {
		for _, codec := range []int8{codecNone, codecZstd} {
			spec := plainBatch(records...)
			spec.codec = codec
			v := &fakeValidator{}
			res, ok := checkSchemas("t", buildBatch(t, spec), tc.rules, v, 1<<20)
			var failed []int32
			for _, re := range res.RecordErrors {
				failed = append(failed, re.Index)
			}
			if ok != (len(tc.failed) == 0) || !slices.Equal(failed, tc.failed) || strings.Join(v.subjects, ",") != strings.Join(tc.subjects, ",") {
				t.Errorf("%s (%s): ok %v failed %v subjects %v, want %v and %v", tc.name, codecNames[codec], ok, failed, v.subjects, tc.failed, tc.subjects)
			}
			if !ok && (res.Code != kerr.InvalidRecord.Code || !strings.Contains(res.Message, ": bad")) {
				t.Errorf("%s: %d %q", tc.name, res.Code, res.Message)
			}
		}
	}
	// Mode id asks once per produce for values framed alike, mode decode
	// for each.
	alike := plainBatch(testRecord{value: []byte("ok-1-a")}, testRecord{value: []byte("ok-1-b")}, testRecord{value: []byte("ok-2-c")})
	for decode, want := range map[bool]int{false: 2, true: 3} {
		v := &fakeValidator{}
		if _, ok := checkSchemas("t", buildBatch(t, alike), schemaRules{value: true, decode: decode}, v, 1<<20); !ok || len(v.subjects) != want {
			t.Errorf("decode %v: ok %v, asked %d times, want %d", decode, ok, len(v.subjects), want)
		}
	}
}

// BenchmarkSchemaValidationCost is the broker's produce path (batch
// validation, per-record rules, schema validation, append) for the same
// batches of 16 records of 1 KiB, uncompressed, each value framed by
// sr.Serde with an Avro schema (a long and ~1 KiB of random bytes, so the
// payload is incompressible), to three topics: validation off, mode id,
// mode decode. One op appends the batch to each in turn, timed apart, so
// a busy machine slows all three alike; reported are each one's ns per
// batch and the ratios to off (the target: id ≤ 1.10). The order
// of the three rotates from op to op.
//
//	go test -run '^$' -bench BenchmarkSchemaValidationCost -benchtime 3s -count 3 ./broker/
func BenchmarkSchemaValidationCost(b *testing.B) {
	tb, batch, targets := newSchemaBench(b)
	buf := make([]byte, len(batch))
	b.SetBytes(int64(len(batch)) * int64(len(targets)))
	b.ResetTimer()
	for i := range b.N {
		for k := range targets {
			// Each goes first in turn; the append stamps offsets into
			// its input, so each gets a fresh copy.
			tg := targets[(i+k)%len(targets)]
			copy(buf, batch)
			start := time.Now()
			prepared, res := tg.p.prepareAppend(buf, tg.cfg, tb.srv.schemaValidatorNow())
			if res.Code == 0 {
				res = tg.p.Append(context.Background(), prepared, replica.AppendOptions{})
			}
			tg.elapsed += time.Since(start)
			if res.Code != 0 {
				b.Fatalf("%s: %v %s", tg.name, kerr.ErrorForCode(res.Code), res.Message)
			}
			if i%256 == 255 {
				if _, err := tg.p.ApplyRetention(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.StopTimer()
	reportSchemaBench(b, targets)
}

// schemaBenchTarget is one topic of the schema-validation benchmarks.
type schemaBenchTarget struct {
	name    string
	topic   string
	configs map[string]string
	p       *partition
	cfg     effectiveTopicConfig
	elapsed time.Duration
}

// newSchemaBench starts a broker with a registry and three topics
// (validation off, mode id, mode decode), and builds one batch of 16
// records of about 1 KiB, Avro framed by franz-go's sr.Serde (the payload
// incompressible), registered for each topic's subject.
func newSchemaBench(b *testing.B) (*testBroker, []byte, []*schemaBenchTarget) {
	const (
		records    = 16
		schemaText = `{"type":"record","name":"Blob","namespace":"bench","fields":[{"name":"seq","type":"long"},{"name":"data","type":"bytes"}]}`
	)
	type blob struct {
		Seq  int64  `avro:"seq"`
		Data []byte `avro:"data"`
	}
	tb := startTestBroker(b, func(c *Config) { c.LogSegmentBytes = 16 << 20 })
	_, cl := startSchemaRegistry(b, tb)
	serde := avroSerde(b, registerSchema(b, cl, "bench-id-value", schemaText, sr.TypeAvro), schemaText, blob{})
	registerSchema(b, cl, "bench-decode-value", schemaText, sr.TypeAvro) // the same id
	batchRecords := make([]testRecord, records)
	for i := range batchRecords {
		value := serde.MustEncode(blob{Seq: int64(i), Data: randomBytes(i, 1024-5-2-2)})
		batchRecords[i] = testRecord{key: []byte("key"), value: value, timestamp: time.Now().UnixMilli()}
	}
	batch := buildBatch(b, plainBatch(batchRecords...))
	targets := []*schemaBenchTarget{
		{name: "off", configs: map[string]string{}},
		{name: "id", configs: map[string]string{valueSchemaValidationConfig: "true"}},
		{name: "decode", configs: map[string]string{valueSchemaValidationConfig: "true", schemaValidationModeConfig: "decode"}},
	}
	for _, tg := range targets {
		tg.topic = "bench-" + tg.name
		tg.configs["retention.bytes"] = "33554432"
		tg.configs["segment.bytes"] = "8388608"
		tb.createTopicWith(tg.topic, tg.configs)
		tg.p = tb.srv.topics.partition(tg.topic, 0)
		tg.cfg = tb.srv.topics.topicConfig(tb.srv.topics.get(tg.topic))
	}
	return tb, batch, targets
}

// reportSchemaBench reports each target's ns per batch and its ratio to
// validation off.
func reportSchemaBench(b *testing.B, targets []*schemaBenchTarget) {
	off := float64(targets[0].elapsed)
	for _, tg := range targets {
		b.ReportMetric(float64(tg.elapsed.Nanoseconds())/float64(b.N), tg.name+"-ns/batch")
		if tg != targets[0] {
			b.ReportMetric(float64(tg.elapsed)/off, tg.name+"/off")
		}
	}
}

// BenchmarkSchemaValidationProduce is the cost as a producer sees it: the
// same batch sent as a Produce request (v9, one partition) over one
// loopback connection to each of the three topics in turn, each round
// trip timed apart (request decoding, the handler, validation, the append
// and the response). Compare with BenchmarkSchemaValidationCost, which
// times the append path alone.
//
//	go test -run '^$' -bench BenchmarkSchemaValidationProduce -benchtime 3s -count 3 ./broker/
func BenchmarkSchemaValidationProduce(b *testing.B) {
	tb, batch, targets := newSchemaBench(b)
	conn := tb.dialRaw()
	b.SetBytes(int64(len(batch)) * int64(len(targets)))
	b.ResetTimer()
	for i := range b.N {
		for k := range targets {
			tg := targets[(i+k)%len(targets)]
			start := time.Now()
			got := conn.produceRaw(tg.topic, 0, batch)
			tg.elapsed += time.Since(start)
			if got.ErrorCode != 0 {
				b.Fatalf("%s: %v %s", tg.name, kerr.ErrorForCode(got.ErrorCode), deref(got.ErrorMessage))
			}
			if i%256 == 255 {
				if _, err := tg.p.ApplyRetention(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.StopTimer()
	reportSchemaBench(b, targets)
}

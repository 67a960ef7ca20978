package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceRecordErrors: records that break a topic rule fail their
// batch with the offending records named by index (KIP-467), decoded by
// kmsg (franz-go's encoder) and by sarama; nothing of the batch is
// appended, and versions before 8 get the error without the list.
func TestProduceRecordErrors(t *testing.T) {
	tb := startTestBroker(t)
	tb.createTopic("compacted", 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")})
	tb.createTopic("no-future", 1, map[string]*string{"message.timestamp.after.max.ms": kadm.StringPtr("60000")})
	tb.createTopic("no-past", 1, map[string]*string{"message.timestamp.before.max.ms": kadm.StringPtr("60000")})
	tb.createTopic("defaults", 1, nil)
	tb.createTopic("append-time", 1, map[string]*string{
		"message.timestamp.after.max.ms": kadm.StringPtr("60000"), "message.timestamp.type": kadm.StringPtr("LogAppendTime")})
	now := time.Now().UnixMilli()
	hour := time.Hour.Milliseconds()
	rec := func(key string, ts int64) testRecord {
		r := testRecord{value: []byte("v"), timestamp: ts}
		if key != "" {
			r.key = []byte(key)
		}
		return r
	}
	conn := tb.dialRaw()

	type want struct {
		code    int16
		indexes []int32
	}
	cases := []struct {
		name, topic string
		records     []testRecord
		want        want
	}{
		{"keyless records on a compacted topic", "compacted",
			[]testRecord{rec("a", now), rec("", now), rec("c", now), rec("", now)}, want{kerr.InvalidRecord.Code, []int32{1, 3}}},
		{"a timestamp an hour ahead", "no-future",
			[]testRecord{rec("a", now), rec("b", now+hour), rec("c", now)}, want{kerr.InvalidTimestamp.Code, []int32{1}}},
		{"a timestamp an hour old", "no-past",
			[]testRecord{rec("a", now-hour), rec("b", now)}, want{kerr.InvalidTimestamp.Code, []int32{0}}},
		{"Kafka 4's default: at most an hour ahead", "defaults",
			[]testRecord{rec("a", now+2*hour), rec("b", now+hour/2), rec("c", now-100*hour)}, want{kerr.InvalidTimestamp.Code, []int32{0}}},
		{"half an hour ahead and long ago are fine by default", "defaults",
			[]testRecord{rec("b", now+hour/2), rec("c", now-100*hour)}, want{0, nil}},
		{"LogAppendTime ignores producer timestamps", "append-time",
			[]testRecord{rec("a", now+hour)}, want{0, nil}},
		{"within every rule", "compacted",
			[]testRecord{rec("a", now), rec("b", now)}, want{0, nil}},
	}
	for _, tc := range cases {
		for _, codec := range []int8{codecNone, codecZstd} {
			before := tb.logEnd(tc.topic, 0)
			spec := plainBatch(tc.records...)
			spec.codec = codec
			batch := buildBatch(t, spec)
			got := conn.produceRaw(tc.topic, 0, batch) // v9
			if got.ErrorCode != tc.want.code {
				t.Fatalf("%s (%s): error %d, want %d", tc.name, codecNames[codec], got.ErrorCode, tc.want.code)
			}
			var indexes []int32
			for _, re := range got.ErrorRecords {
				if re.ErrorMessage == nil || *re.ErrorMessage == "" {
					t.Fatalf("%s: record %d has no error message", tc.name, re.RelativeOffset)
				}
				indexes = append(indexes, re.RelativeOffset)
			}
			if !slices.Equal(indexes, tc.want.indexes) {
				t.Fatalf("%s (%s): record errors %v, want %v", tc.name, codecNames[codec], indexes, tc.want.indexes)
			}
			after := tb.logEnd(tc.topic, 0)
			if tc.want.code != 0 {
				if got.ErrorMessage == nil || *got.ErrorMessage == "" {
					t.Fatalf("%s: no error_message", tc.name)
				}
				if after != before {
					t.Fatalf("%s: a refused batch moved the log end from %d to %d", tc.name, before, after)
				}
			} else if after != before+int64(len(tc.records)) {
				t.Fatalf("%s: log end %d after appending %d records at %d", tc.name, after, len(tc.records), before)
			}
		}
	}

	// Produce v7 has no record_errors: the same error, no list.
	batch := buildBatch(t, plainBatch(rec("a", now), rec("", now)))
	resp := roundTrip[*kmsg.ProduceResponse](conn, produceRequest(7, "compacted", 0, batch))
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.InvalidRecord.Code || len(p.ErrorRecords) != 0 {
		t.Fatalf("v7: error %d with %d record errors, want INVALID_RECORD and none", p.ErrorCode, len(p.ErrorRecords))
	}

	// sarama's own encoder and decoder.
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	broker := sarama.NewBroker(tb.addr())
	if err := broker.Open(cfg); err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	req := &sarama.ProduceRequest{RequiredAcks: sarama.WaitForAll, Timeout: 10000, Version: 8}
	req.AddBatch("compacted", 0, &sarama.RecordBatch{Version: 2, FirstTimestamp: time.Now(), MaxTimestamp: time.Now(), Records: []*sarama.Record{
		{Key: []byte("k0"), Value: []byte("v0")}, {Value: []byte("keyless")}, {Key: []byte("k2"), Value: []byte("v2")},
	}})
	sresp, err := broker.Produce(req)
	if err != nil {
		t.Fatalf("sarama produce: %v", err)
	}
	block := sresp.GetBlock("compacted", 0)
	if block == nil || block.Err != sarama.ErrInvalidRecord || len(block.RecordErrors) != 1 || block.RecordErrors[0].BatchIndex != 1 ||
		block.RecordErrors[0].BatchIndexErrorMessage == nil {
		t.Fatalf("sarama: block %+v, want INVALID_RECORD naming batch index 1", block)
	}
}

// TestTimestampBoundsBrokerDefault: log.message.timestamp.after.max.ms is
// the topic config's broker synonym, as in Kafka; DescribeConfigs names it.
func TestTimestampBoundsBrokerDefault(t *testing.T) {
	tb := startTestBroker(t, func(c *Config) {
		if err := c.Set("log.message.timestamp.after.max.ms", "86400000"); err != nil {
			t.Fatal(err)
		}
	})
	tb.createTopic("day-ahead", 1, nil)
	now := time.Now().UnixMilli()
	got := tb.dialRaw().produceRaw("day-ahead", 0, buildBatch(t, plainBatch(testRecord{key: []byte("k"), value: []byte("v"), timestamp: now + 2*time.Hour.Milliseconds()})))
	if got.ErrorCode != 0 {
		t.Fatalf("two hours ahead under a one-day broker bound: error %d", got.ErrorCode)
	}
	rcs, err := tb.admin().DescribeTopicConfigs(testContext(t), "day-ahead")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("day-ahead", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc.Configs {
		if c.Key == "message.timestamp.after.max.ms" {
			if c.MaybeValue() != "86400000" || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
				t.Fatalf("message.timestamp.after.max.ms = %q from %v, want 86400000 from the static broker config", c.MaybeValue(), c.Source)
			}
			return
		}
	}
	t.Fatal("DescribeConfigs does not list message.timestamp.after.max.ms")
}

package serde

import (
	"testing"

	"github.com/strata-streaming/strata/registry/schema"
)

func TestSubjectNameStrategies(t *testing.T) {
	c, _ := newTestClient(t, startRegistry(t))
	avroRecord := mustRegister(t, c, "a", Text{Schema: userV1})
	avroPrimitive := mustRegister(t, c, "b", Text{Schema: `"string"`})
	proto := mustRegister(t, c, "p", Text{Type: schema.Protobuf, Schema: `syntax = "proto3"; package shop; message Order { string id = 1; } message Other {}`})
	untitled := mustRegister(t, c, "j", Text{Type: schema.JSON, Schema: `{"type":"object"}`})

	if got := TopicNameStrategy("orders", true); got != "orders-key" {
		t.Errorf("key subject %q", got)
	}
	if got := TopicNameStrategy("orders", false); got != "orders-value" {
		t.Errorf("value subject %q", got)
	}
	for _, tc := range []struct {
		s    Schema
		want string // "" for an error
	}{{avroRecord, "acme.User"}, {avroPrimitive, ""}, {proto, "shop.Order"}, {untitled, ""}} {
		got, err := RecordNameStrategy(tc.s)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("RecordNameStrategy(%s) = %q, %v; want %q", tc.s.Text, got, err, tc.want)
		}
	}
	if got, err := TopicRecordNameStrategy("orders", proto); err != nil || got != "orders-shop.Order" {
		t.Errorf("TopicRecordNameStrategy = %q, %v", got, err)
	}
	for name, want := range map[string]string{
		"io.confluent.kafka.serializers.subject.TopicNameStrategy": "t-value",
		"TopicNameStrategy": "t-value",
		"topic_name":        "t-value",
		"io.confluent.kafka.serializers.subject.RecordNameStrategy": "acme.User",
		"record": "acme.User",
		"io.confluent.kafka.serializers.subject.TopicRecordNameStrategy": "t-acme.User",
		"TOPIC_RECORD_NAME": "t-acme.User",
	} {
		strategy, err := StrategyByName(name)
		if err != nil {
			t.Errorf("StrategyByName(%q): %v", name, err)
			continue
		}
		if got, err := strategy("t", false, avroRecord); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := StrategyByName("io.confluent.kafka.serializers.subject.Nope"); err == nil {
		t.Error("unknown strategy accepted")
	}
}

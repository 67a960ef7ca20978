package serde

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	hamba "github.com/hamba/avro/v2"

	"github.com/strata-streaming/strata/registry/avro"
	"github.com/strata-streaming/strata/registry/protobuf"
	"github.com/strata-streaming/strata/registry/schema"
)

// Strategy names the subject a serializer registers (or looks up) a
// schema under for a record of topic, as key or value: Confluent's
// subject name strategies.
type Strategy func(topic string, isKey bool, s Schema) (string, error)

// TopicNameStrategy is "<topic>-key" or "<topic>-value", Confluent's
// default.
func TopicNameStrategy(topic string, isKey bool) string {
	if isKey {
		return topic + "-key"
	}
	return topic + "-value"
}

// RecordNameStrategy is the full name of the schema's record: of an Avro
// named type, of a Protobuf schema's first message, or the "title" of a
// JSON schema (as Confluent's JSON Schema serializer takes it).
func RecordNameStrategy(s Schema) (string, error) {
	if s.Parsed == nil {
		return "", ErrNotParsed
	}
	switch s.Type {
	case schema.Avro:
		if named, ok := avro.Schema(s.Parsed).(hamba.NamedSchema); ok {
			return named.FullName(), nil
		}
		return "", errors.New("serde: record name strategy: the Avro schema is not a named type (record, enum or fixed)")
	case schema.Protobuf:
		md, err := protobuf.MessageByIndexes(s.Parsed, nil)
		if err != nil {
			return "", fmt.Errorf("serde: record name strategy: %w", err)
		}
		return string(md.FullName()), nil
	case schema.JSON:
		var doc struct {
			Title string `json:"title"`
		}
		if json.Unmarshal([]byte(s.Text), &doc) != nil || doc.Title == "" {
			return "", errors.New(`serde: record name strategy: the JSON schema has no "title"`)
		}
		return doc.Title, nil
	}
	return "", fmt.Errorf("serde: %w %q", schema.ErrUnknownType, s.Type)
}

// TopicRecordNameStrategy is "<topic>-<record name>".
func TopicRecordNameStrategy(topic string, s Schema) (string, error) {
	name, err := RecordNameStrategy(s)
	if err != nil {
		return "", err
	}
	return topic + "-" + name, nil
}

// StrategyByName is the strategy a name gives, as Confluent's
// key.subject.name.strategy and value.subject.name.strategy settings
// write it (io.confluent.kafka.serializers.subject.TopicNameStrategy, …)
// or short (TopicNameStrategy, topic_name, topic; RecordNameStrategy,
// record_name, record; TopicRecordNameStrategy, topic_record_name,
// topic_record), in any case.
func StrategyByName(name string) (Strategy, error) {
	short := strings.TrimPrefix(strings.TrimSpace(name), "io.confluent.kafka.serializers.subject.")
	switch strings.ToLower(strings.ReplaceAll(short, "_", "")) {
	case "topicnamestrategy", "topicname", "topic":
		return func(topic string, isKey bool, _ Schema) (string, error) { return TopicNameStrategy(topic, isKey), nil }, nil
	case "recordnamestrategy", "recordname", "record":
		return func(_ string, _ bool, s Schema) (string, error) { return RecordNameStrategy(s) }, nil
	case "topicrecordnamestrategy", "topicrecordname", "topicrecord":
		return func(topic string, _ bool, s Schema) (string, error) { return TopicRecordNameStrategy(topic, s) }, nil
	}
	return nil, fmt.Errorf("serde: unknown subject name strategy %q: want TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy", name)
}

package broker

// Broker-side schema validation, as Confluent Server and Redpanda do it
// (Kafka has none): a topic with confluent.value.schema.validation=true
// (or confluent.key.schema.validation=true) accepts only records whose
// value (key) a Confluent serializer framed with a schema id that the
// schema registry holds for the record's subject.
//
// Topic configs (topic_config.go), by Confluent's names:
//
//	confluent.value.schema.validation      false | true
//	confluent.key.schema.validation        false | true
//	confluent.value.subject.name.strategy  TopicNameStrategy (default) | RecordNameStrategy | TopicRecordNameStrategy
//	confluent.key.subject.name.strategy    (short names, or Confluent's classes io.confluent.kafka.serializers.subject.*)
//	strata.schema.validation.mode          id (default) | decode
//
// The subject: TopicNameStrategy <topic>-value (-key); RecordNameStrategy
// the record name of the schema the id names (SchemaValidator.RecordName);
// TopicRecordNameStrategy <topic>-<record name>. Mode id: the key or value
// must start with the magic byte 0 and a 4-byte schema id that is a live
// (not soft-deleted) version of the subject. Mode decode: the payload must
// also decode with that schema (Avro binary, JSON Schema, Protobuf message
// indexes and message).
//
// A null key or value (a tombstone) is not checked. A batch with a failing
// record is refused whole with INVALID_RECORD, each failing record named
// in record_errors (Produce v8+, KIP-467) and the first in error_message,
// as Kafka reports its own per-record rules: nothing of the batch is
// appended. The check runs in prepareAppend after the batch framing and
// the per-record rules, on the records as produced (before any
// recompression), with no partition lock held.
//
// The validator is the node's schema registry (package registry, started
// by `strata server --set schema.registry.enable=true`, which calls
// SetSchemaValidator). The broker imports nothing of it: the registry
// satisfies SchemaValidator structurally, answering from its in-memory
// view without network I/O. A topic with validation on, produced to on a
// node without a validator, refuses every batch with INVALID_RECORD and a
// message saying so.

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-streaming/strata/broker/replica"
	"github.com/strata-streaming/strata/broker/storage"
)

// SchemaValidator checks records against a schema registry. Both methods
// are called for every checked key or value of every produced batch, with
// no lock of the broker held; they must not do network I/O.
type SchemaValidator interface {
	// CheckRecord returns why data, a key or value in Confluent's wire
	// format, is not valid for subject: not framed, an id that is not a
	// live version of subject, or (decode) a payload that does not decode
	// with the id's schema. The error's text is shown to the producer.
	// Without decode the answer may depend only on subject and data's
	// first 5 bytes (magic byte and id): within one produce the broker
	// asks once for records framed alike.
	CheckRecord(subject string, data []byte, decode bool) error
	// RecordName is the record name of the schema data's id names (the
	// one Confluent's RecordNameStrategy puts in the subject).
	RecordName(data []byte) (string, error)
}

// SetSchemaValidator sets the validator of topics with schema validation
// on (nil: none, and such topics refuse produces). Safe while serving. A
// validator that is also an IcebergSchemaRegistry (the node's registry)
// gives the typed Iceberg modes their schemas (iceberg_typed.go).
func (s *Server) SetSchemaValidator(v SchemaValidator) {
	if v == nil {
		s.schemaValidator.Store(nil)
		return
	}
	s.schemaValidator.Store(&v)
}

// schemaValidatorNow is the validator set now, nil if none.
func (s *Server) schemaValidatorNow() SchemaValidator {
	if v := s.schemaValidator.Load(); v != nil {
		return *v
	}
	return nil
}

// The schema-validation topic configs.
const (
	valueSchemaValidationConfig = "confluent.value.schema.validation"
	keySchemaValidationConfig   = "confluent.key.schema.validation"
	valueSubjectStrategyConfig  = "confluent.value.subject.name.strategy"
	keySubjectStrategyConfig    = "confluent.key.subject.name.strategy"
	schemaValidationModeConfig  = "strata.schema.validation.mode"
)

// subjectStrategy is how a record's subject is named.
type subjectStrategy int

const (
	topicNameStrategy subjectStrategy = iota
	recordNameStrategy
	topicRecordNameStrategy
)

// confluentStrategyPackage is where Confluent's strategy classes live.
const confluentStrategyPackage = "io.confluent.kafka.serializers.subject."

var subjectStrategies = map[string]subjectStrategy{
	"TopicNameStrategy":       topicNameStrategy,
	"RecordNameStrategy":      recordNameStrategy,
	"TopicRecordNameStrategy": topicRecordNameStrategy,
}

func parseSubjectStrategy(v string) (subjectStrategy, bool) {
	s, ok := subjectStrategies[strings.TrimPrefix(strings.TrimSpace(v), confluentStrategyPackage)]
	return s, ok
}

func validateSubjectStrategy(v string) error {
	if _, ok := parseSubjectStrategy(v); !ok {
		return fmt.Errorf("%q is not a subject name strategy: want TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy (or Confluent's class name, %s…)", v, confluentStrategyPackage)
	}
	return nil
}

// schemaRules are a topic's schema-validation settings.
type schemaRules struct {
	key, value                 bool
	keyStrategy, valueStrategy subjectStrategy
	decode                     bool
}

// parseSchemaRules reads the schema-validation settings of a topic's
// effective configs (validated values: a bad one reads as its default).
func parseSchemaRules(values map[string]string) schemaRules {
	r := schemaRules{key: values[keySchemaValidationConfig] == "true", value: values[valueSchemaValidationConfig] == "true"}
	r.keyStrategy, _ = parseSubjectStrategy(values[keySubjectStrategyConfig])
	r.valueStrategy, _ = parseSubjectStrategy(values[valueSubjectStrategyConfig])
	r.decode = values[schemaValidationModeConfig] == "decode"
	return r
}

// checkSchemas refuses a produce to topic whose keys or values fail the
// topic's schema validation (schemaRules), naming each failing record as
// checkRecordRules does. v is the node's validator, nil if it has none.
func checkSchemas(topic string, records []byte, rules schemaRules, v SchemaValidator, limit int) (replica.AppendResult, bool) {
	if !rules.key && !rules.value {
		return replica.AppendResult{}, true
	}
	if v == nil {
		which := valueSchemaValidationConfig
		if !rules.value {
			which = keySchemaValidationConfig
		}
		return replica.AppendResult{Code: kerr.InvalidRecord.Code, Message: fmt.Sprintf(
			"topic %s has %s=true, but this node validates no schemas: schema validation needs schema.registry.enable=true on the node", topic, which)}, false
	}
	var violations []storage.RecordViolation
	// TopicNameStrategy's subjects, made once per produce; and in mode
	// id, the framing last accepted for each, since a producer's records
	// mostly carry one schema id: a record with the same 5 bytes is
	// accepted without asking again.
	keyMemo := subjectMemo{subject: topic + "-key"}
	valueMemo := subjectMemo{subject: topic + "-value"}
	check := func(index int32, what string, data []byte, strategy subjectStrategy, memo *subjectMemo) {
		if strategy == topicNameStrategy && !rules.decode && memo.accepts(data) {
			return
		}
		subject, err := memo.subject, error(nil)
		if strategy != topicNameStrategy {
			subject, err = subjectFor(topic, data, strategy, v)
		}
		if err == nil {
			err = v.CheckRecord(subject, data, rules.decode)
		}
		if err == nil && strategy == topicNameStrategy {
			memo.accepted(data)
		}
		if err != nil {
			where := fmt.Sprintf("%s of record %d", what, index)
			if subject != "" {
				where += fmt.Sprintf(" (subject '%s')", subject)
			}
			violations = append(violations, storage.RecordViolation{Index: index, Message: where + ": " + err.Error()})
		}
	}
	err := storage.ForEachRecord(records, limit, func(index int32, key, value []byte) error {
		if rules.key && key != nil {
			check(index, "key", key, rules.keyStrategy, &keyMemo)
		}
		if rules.value && value != nil {
			check(index, "value", value, rules.valueStrategy, &valueMemo)
		}
		return nil
	})
	if err != nil {
		return inflationFailure(err, limit), false
	}
	if len(violations) == 0 {
		return replica.AppendResult{}, true
	}
	return violationsFailure(violations), false
}

// subjectMemo is a TopicNameStrategy subject and the framing (magic byte
// and schema id) last accepted for it within one produce.
type subjectMemo struct {
	subject string
	header  [5]byte
	valid   bool
}

func (m *subjectMemo) accepts(data []byte) bool {
	return m.valid && len(data) >= len(m.header) && [5]byte(data[:5]) == m.header
}

func (m *subjectMemo) accepted(data []byte) {
	if len(data) >= len(m.header) {
		m.header, m.valid = [5]byte(data[:5]), true
	}
}

// subjectFor names the subject of a key or value under a record-name
// strategy.
func subjectFor(topic string, data []byte, strategy subjectStrategy, v SchemaValidator) (string, error) {
	name, err := v.RecordName(data)
	if err != nil {
		return "", fmt.Errorf("naming its subject (the strategy needs the schema's record name): %w", err)
	}
	if strategy == recordNameStrategy {
		return name, nil
	}
	return topic + "-" + name, nil
}

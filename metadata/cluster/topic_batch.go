package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
)

// TypeTopicBatch is TopicBatch's type byte.
const TypeTopicBatch RecordType = 25

// MaxTopicBatch bounds the records of one TopicBatch.
const MaxTopicBatch = 100_000

// TopicBatch carries the topic changes of one admin request (CreateTopics,
// DeleteTopics, CreatePartitions) as one log entry: one raft round and one
// fsync for the whole request instead of one per topic. Its records —
// CreateTopic, DeleteTopic and CreatePartitions only — apply in order, each
// on its own against the state the earlier ones left: a record the state
// does not allow (TOPIC_ALREADY_EXISTS, …) is skipped with its rejection
// and the others still apply. The batch as a whole is never rejected once
// it validates; ApplyTopicBatch returns each record's outcome.
//
// Encoding: {"records":[{"type":6,"record":{…CreateTopic…}},…]}.
type TopicBatch struct {
	Records []Record
}

// Type implements Record.
func (TopicBatch) Type() RecordType { return TypeTopicBatch }

// Validate implements Record: 1..MaxTopicBatch records, each a valid
// CreateTopic, DeleteTopic or CreatePartitions.
func (r TopicBatch) Validate() error {
	if len(r.Records) == 0 || len(r.Records) > MaxTopicBatch {
		return invalid("topic batch of %d records", len(r.Records))
	}
	for i, rec := range r.Records {
		switch rec.(type) {
		case CreateTopic, DeleteTopic, CreatePartitions:
		default:
			return invalid("topic batch record %d: %T may not be batched", i, rec)
		}
		if err := rec.Validate(); err != nil {
			return fmt.Errorf("topic batch record %d: %w", i, err)
		}
	}
	return nil
}

type topicBatchItem struct {
	Type   RecordType      `json:"type"`
	Record json.RawMessage `json:"record"`
}

type topicBatchJSON struct {
	Records []topicBatchItem `json:"records"`
}

// MarshalJSON encodes the records with their type bytes.
func (r TopicBatch) MarshalJSON() ([]byte, error) {
	out := topicBatchJSON{Records: make([]topicBatchItem, len(r.Records))}
	for i, rec := range r.Records {
		if rec == nil {
			return nil, invalid("topic batch record %d: nil", i)
		}
		body, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		out.Records[i] = topicBatchItem{Type: rec.Type(), Record: body}
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes strictly: unknown fields, unknown or unbatchable
// types and bad bodies are errors.
func (r *TopicBatch) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw topicBatchJSON
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	recs := make([]Record, len(raw.Records))
	for i, item := range raw.Records {
		var rec Record
		switch item.Type {
		case TypeCreateTopic:
			rec = decodeInto[CreateTopic](item.Record)
		case TypeDeleteTopic:
			rec = decodeInto[DeleteTopic](item.Record)
		case TypeCreatePartitions:
			rec = decodeInto[CreatePartitions](item.Record)
		default:
			return fmt.Errorf("%w: topic batch record %d: type %d may not be batched", ErrMalformed, i, item.Type)
		}
		if rec == nil {
			return fmt.Errorf("%w: topic batch record %d: bad body", ErrMalformed, i)
		}
		recs[i] = rec
	}
	r.Records = recs
	return nil
}

// ApplyTopicBatch applies the batch's records in order, each on its own,
// and returns the state after them with one outcome per record (nil: it
// applied; else its rejection, wrapping ErrRejected). The topic maps are
// copied once for the whole batch, not once per record.
func ApplyTopicBatch(s State, b TopicBatch) (State, []error) {
	errs := make([]error, len(b.Records))
	if err := b.Validate(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return s, errs
	}
	topics := maps.Clone(s.Topics)
	if topics == nil {
		topics = map[string]Topic{}
	}
	ids := maps.Clone(s.TopicIDs)
	if ids == nil {
		ids = map[TopicID]string{}
	}
	next := s
	next.Topics, next.TopicIDs = topics, ids
	changed := false
	for i, rec := range b.Records {
		var (
			t   Topic
			err error
		)
		switch r := rec.(type) {
		case CreateTopic:
			if t, err = createdTopic(next, r); err == nil {
				topics[t.Name], ids[t.ID] = t, t.Name
			}
		case DeleteTopic:
			if t, err = topicToDelete(next, r); err == nil {
				delete(topics, t.Name)
				delete(ids, t.ID)
			}
		case CreatePartitions:
			if t, err = grownTopic(next, r); err == nil {
				topics[t.Name] = t
			}
		}
		errs[i] = err
		changed = changed || err == nil
	}
	if !changed {
		return s, errs
	}
	return next, errs
}

package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/strata-streaming/strata/registry/schema"
)

// The key types of the _schemas topic (Confluent's SchemaRegistryKeyType).
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyNoop          = "NOOP"
)

// ErrBadRecord marks a _schemas record this registry cannot read; the
// reader skips it (and says so in the log).
var ErrBadRecord = errors.New("registry: unreadable _schemas record")

// recordKey is the key of every record type. Subject is nil for the
// global CONFIG and MODE; Seq and Node are Strata's (see doc.go): set on
// sequenced writes, absent from records another registry wrote.
type recordKey struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject"`
	Version int     `json:"version"`
	Magic   int     `json:"magic"`
	Seq     *int64  `json:"seq"`
	Node    string  `json:"node"`
}

// MarshalJSON writes the key as Confluent does, field for field, with
// seq and node after them when set.
func (k recordKey) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"keytype":`)
	writeString(&b, k.KeyType)
	if k.KeyType != keyNoop {
		b.WriteString(`,"subject":`)
		if k.Subject == nil {
			b.WriteString("null")
		} else {
			writeString(&b, *k.Subject)
		}
	}
	if k.KeyType == keySchema {
		b.WriteString(`,"version":`)
		b.WriteString(strconv.Itoa(k.Version))
	}
	b.WriteString(`,"magic":`)
	b.WriteString(strconv.Itoa(k.Magic))
	if k.Seq != nil {
		b.WriteString(`,"seq":`)
		b.WriteString(strconv.FormatInt(*k.Seq, 10))
		b.WriteString(`,"node":`)
		writeString(&b, k.Node)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always encodes
	b.Write(enc)
}

// stamp is what a sequenced write puts in its key: the end offset its
// writer read (the offset the record must land at to count) and the
// writer's instance id.
type stamp struct {
	seq  int64
	node string
}

func schemaKey(subject string, version int, st *stamp) recordKey {
	k := recordKey{KeyType: keySchema, Subject: &subject, Version: version, Magic: 1}
	if st != nil {
		k.Seq, k.Node = &st.seq, st.node
	}
	return k
}

func deleteSubjectKey(subject string, st stamp) recordKey {
	return recordKey{KeyType: keyDeleteSubject, Subject: &subject, Seq: &st.seq, Node: st.node}
}

// scopeKey is a CONFIG or MODE key; subject "" is the global one.
func scopeKey(keyType, subject string) recordKey {
	k := recordKey{KeyType: keyType}
	if subject != "" {
		k.Subject = &subject
	}
	return k
}

// schemaValue is a SCHEMA record's value.
type schemaValue struct {
	Subject    string             `json:"subject"`
	Version    int                `json:"version"`
	ID         int                `json:"id"`
	SchemaType schema.Type        `json:"schemaType,omitempty"` // omitted for AVRO, as Confluent does
	References []schema.Reference `json:"references,omitempty"`
	Schema     string             `json:"schema"`
	Deleted    bool               `json:"deleted"`
}

type configValue struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
}

type modeValue struct {
	Mode string `json:"mode"`
}

type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// decodeKey reads a key of any type; unknown fields are ignored, as
// Confluent's reader ignores Strata's seq and node.
func decodeKey(b []byte) (recordKey, error) {
	var k recordKey
	if err := json.Unmarshal(b, &k); err != nil {
		return k, fmt.Errorf("%w: key %q: %v", ErrBadRecord, b, err)
	}
	switch k.KeyType {
	case keySchema:
		if k.Subject == nil || k.Version < 1 {
			return k, fmt.Errorf("%w: SCHEMA key %q without a subject and a version", ErrBadRecord, b)
		}
	case keyDeleteSubject:
		if k.Subject == nil {
			return k, fmt.Errorf("%w: DELETE_SUBJECT key %q without a subject", ErrBadRecord, b)
		}
	case keyConfig, keyMode, keyNoop:
	default:
		return k, fmt.Errorf("%w: key type %q", ErrBadRecord, k.KeyType)
	}
	return k, nil
}

func encodeRecord(key recordKey, value any) (Record, error) {
	k, err := json.Marshal(key)
	if err != nil {
		return Record{}, err
	}
	if value == nil {
		return Record{Key: k}, nil
	}
	v, err := json.Marshal(value)
	if err != nil {
		return Record{}, err
	}
	return Record{Key: k, Value: v}, nil
}
